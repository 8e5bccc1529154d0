import Foundation

/// The rules of bot players: a player owns up to `BotRules.maxPerOwner` bots, each a
/// player of its own that trades only through API keys (it cannot log in: it has no
/// password) and that its owner seats in leagues.
struct BotService: Sendable {
    let store: BotStore
    let keys: ApiKeyService

    func create(ownerID: Int, name: String) async throws -> Bot {
        try Credentials.validateUsername(name, field: "name")
        return try await store.create(ownerID: ownerID, username: name)
    }

    func bots(ownerID: Int) async throws -> [Bot] {
        try await store.bots(ownerID: ownerID)
    }

    /// The owner's bot; `noSuchBot` for anyone else's.
    func bot(id: Int, ownerID: Int) async throws -> Bot {
        guard let bot = try await store.bots(ownerID: ownerID, id: id).first else { throw BotError.noSuchBot }
        return bot
    }

    /// Deletes the bot; its keys stop working on this process at once (on others within
    /// the key cache's lifetime) and its trade-update sockets close within their key check.
    func delete(id: Int, ownerID: Int) async throws {
        guard let revoked = try await store.delete(id: id, ownerID: ownerID) else { throw BotError.noSuchBot }
        for key in revoked { keys.forget(keyID: key) }
    }
}
