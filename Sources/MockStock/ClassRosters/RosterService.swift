import Foundation

/// The rules of class rosters: the host of a league creates the class's logins (no
/// e-mail, nothing but the name the host types), seats them, and resets their passwords.
struct RosterService: Sendable {
    let store: RosterStore
    let hasher: PasswordHasher
    let versions: TokenVersionCache
    let startingCash: Decimal

    static let maxStudents = 200

    /// Creates one account per name, seated in the league; the passwords appear only here.
    func create(displayNames raw: [String], in league: LeagueStore.LeagueRecord, by actor: Actor) async throws -> [RosterStudent] {
        guard league.ownerID == actor.userID else { throw LeagueError.ownerOnly(action: "add a class roster") }
        guard (1...Self.maxStudents).contains(raw.count) else { throw InvalidInput("students must hold 1 to \(Self.maxStudents) names.") }
        let names = try raw.enumerated().map { index, name in
            let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
            try TextInput.check(trimmed, field: "students[\(index)].displayName", length: 1...64)
            return trimmed
        }
        let passwords = names.map { _ in GeneratedCredentials.password() }
        let hashes = try await hashAll(passwords)
        var usernames = names.map(GeneratedCredentials.username(for:))
        for _ in 0..<5 {
            // Two names of one class may draw the same username: draw again before asking.
            while let repeated = Self.firstRepeat(usernames) { usernames[repeated] = GeneratedCredentials.username(for: names[repeated]) }
            let students = names.indices.map { RosterStore.NewStudent(displayName: names[$0], username: usernames[$0], passwordHash: hashes[$0]) }
            do {
                switch try await store.create(students, leagueID: league.id, hostID: actor.userID, startingCash: startingCash,
                                              audit: actor.event(.leagueRosterCreate, league: league.id)) {
                case .created(let ids):
                    return names.indices.map { RosterStudent(userId: ids[$0], username: usernames[$0], displayName: names[$0], password: passwords[$0]) }
                case .usernamesTaken(let taken):
                    for index in usernames.indices where taken.contains(usernames[index]) {
                        usernames[index] = GeneratedCredentials.username(for: names[index])
                    }
                }
            } catch LeagueStore.SeatRefusal.full {
                throw LeagueError.leagueFull
            } catch LeagueStore.SeatRefusal.ended {
                throw LeagueError.leagueEnded
            } catch AccountError.usernameTaken {
                continue  // registered by someone else a moment ago: draw again
            }
        }
        throw LeagueError.noFreeJoinCode
    }

    /// A new password for a student the host manages in this league; their old password
    /// and every token stop working at once (on other processes, when the revocation is
    /// announced: `stream_revocation`).
    func resetPassword(of userID: Int, in league: LeagueStore.LeagueRecord, by actor: Actor) async throws -> String {
        guard league.ownerID == actor.userID else { throw LeagueError.ownerOnly(action: "reset a student's password") }
        let password = GeneratedCredentials.password()
        guard let (version, role) = try await store.setPassword(
            userID: userID, leagueID: league.id, hostID: actor.userID, passwordHash: try await hasher.hashGenerated(password),
            audit: actor.event(.leaguePasswordReset, league: league.id, target: userID)
        ) else { throw RosterError.notManaged }
        versions.remember(userID: userID, version: version, role: role)
        return password
    }

    /// Hashes on the blocking pool's threads side by side.
    private func hashAll(_ passwords: [String]) async throws -> [String] {
        try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for (index, password) in passwords.enumerated() {
                group.addTask { (index, try await hasher.hashGenerated(password)) }
            }
            var hashes = [String](repeating: "", count: passwords.count)
            for try await (index, hash) in group { hashes[index] = hash }
            return hashes
        }
    }

    private static func firstRepeat(_ usernames: [String]) -> Int? {
        var seen = Set<String>()
        for (index, name) in usernames.enumerated() where !seen.insert(name).inserted { return index }
        return nil
    }
}
