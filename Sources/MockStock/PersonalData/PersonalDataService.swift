import Foundation

/// A person's data (GDPR articles 15 and 17, COPPA): a copy of all of it, and its erasure
/// by the person, by the host who manages a student's account, or by an admin.
struct PersonalDataService: Sendable {
    let store: PersonalDataStore
    let accounts: AccountService
    let keys: ApiKeyService

    func export(userID: Int) async throws -> String {
        guard let document = try await store.export(userID: userID) else { throw AccountError.unknownUser }
        return document
    }

    /// The caller erases their own account, confirming with its password.
    func eraseOwn(by actor: Actor, password: String, from address: String) async throws {
        try await accounts.confirmPassword(userID: actor.userID, password: password, from: address)
        _ = try await erase(actor.userID, .own, audit: actor.event(.accountDelete, target: actor.userID))
    }

    /// A league's host erases a student of their class roster who is a member of it.
    func eraseManaged(_ userID: Int, in league: LeagueStore.LeagueRecord, by actor: Actor) async throws {
        guard league.ownerID == actor.userID else { throw LeagueError.ownerOnly(action: "erase a student's account") }
        let outcome = try await erase(userID, .managed(hostID: actor.userID, leagueID: league.id),
                                      audit: actor.event(.leagueMemberDelete, league: league.id, target: userID))
        guard outcome != .notFound, outcome != .refused else { throw RosterError.notManaged }
    }

    /// An admin erases anyone's account but an admin's.
    func eraseByAdmin(_ userID: Int, by actor: Actor) async throws {
        switch try await erase(userID, .byAdmin, audit: actor.event(.adminUserDelete, target: userID)) {
        case .erased: return
        case .notFound: throw AdminError.noSuchUser
        case .refused: throw PersonalDataError.adminAccount
        }
    }

    /// Erases the managed students whose league's retention (`deleteManagedAfterDays`)
    /// has run out, each as its host's erasure (in the league's audit log, marked as the
    /// retention's). Run by every process: an account already erased is simply not found.
    @discardableResult
    func eraseExpiredManaged() async throws -> Int {
        var erased = 0
        for due in try await store.erasuresDue() {
            let host = Actor(userID: due.hostID, requestID: nil)
            let outcome = try await erase(due.userID, .managed(hostID: due.hostID, leagueID: due.leagueID),
                                          audit: host.event(.leagueMemberDelete, league: due.leagueID, target: due.userID, ["retention": .flag(true)]))
            if case .erased = outcome { erased += 1 }
        }
        return erased
    }

    /// Erases, then forgets the account's tokens and keys on this process at once (other
    /// processes when the erasure is announced).
    @discardableResult
    func erase(_ userID: Int, _ erasing: PersonalDataStore.Erasing, audit: AuditEntry) async throws -> PersonalDataStore.Erasure {
        let outcome = try await store.erase(userID: userID, erasing, audit: audit)
        if case .erased(let deleted) = outcome {
            accounts.versions.forget(userID: userID)
            keys.forget(keyIDs: deleted)
        }
        return outcome
    }
}

enum PersonalDataError: Error, Equatable {
    /// An admin's account, which another admin does not erase.
    case adminAccount
}
