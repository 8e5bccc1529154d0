import Foundation

/// Creating, listing and revoking API keys, and finding who a key acts as. Lookups are
/// cached for `cacheLifetime` per process: a key revoked here stops working at once, and
/// on other processes within that lifetime (2 s).
struct ApiKeyService: Sendable {
    let store: ApiKeyStore
    let cache: ExpiringCache<String, ApiKeyStore.Holder>
    /// Keys whose use was recorded in the last minute by this process.
    let recentlyUsed: ExpiringCache<String, Bool>

    init(store: ApiKeyStore, cacheLifetime: Duration = .seconds(2)) {
        self.store = store
        cache = ExpiringCache(lifetime: cacheLifetime, capacity: 100_000)
        recentlyUsed = ExpiringCache(lifetime: .seconds(60), capacity: 100_000)
    }

    /// A key of the caller, or of one of the caller's bots (`botId`).
    func create(userID: Int, _ request: ApiKeyRequest) async throws -> CreatedApiKey {
        let name = request.name ?? ""
        try TextInput.check(name, field: "name", length: 0...64)
        switch try await store.create(ownerID: userID, holderID: request.botId ?? userID, portfolioID: request.portfolioId, name: name) {
        case .created(let key): return key
        case .noSuchHolder: throw BotError.noSuchBot
        case .noSuchPortfolio: throw TradingError.noSuchPortfolio
        }
    }

    /// The caller's keys and their bots' keys.
    func keys(userID: Int) async throws -> [ApiKey] {
        try await store.keys(ownerID: userID)
    }

    func revoke(userID: Int, keyID: String) async throws {
        guard ApiKeyFormat.isKeyID(keyID), try await store.delete(ownerID: userID, keyID: keyID) else { throw ApiKeyError.noSuchKey }
        forget(keyID: keyID)
    }

    /// Forgets a revoked key on this process at once.
    func forget(keyID: String) {
        cache.removeValue(for: keyID)
    }

    /// Forgets keys revoked anywhere (announced by `api_keys_revoked`).
    func forget(keyIDs: [String]) {
        cache.forget(keyIDs)
    }

    /// Who the key acts as when the secret is its own; nil otherwise.
    func holder(keyID: String, secret: String) async throws -> ApiKeyStore.Holder? {
        guard ApiKeyFormat.isKeyID(keyID), secret.utf8.count <= 128 else { return nil }
        let holder: ApiKeyStore.Holder
        if let cached = cache.value(for: keyID) {
            holder = cached
        } else {
            let read = cache.now
            guard let stored = try await store.holder(keyID: keyID) else { return nil }
            cache.store(stored, for: keyID, at: read)
            holder = stored
        }
        guard ApiKeyStore.hash(secret: secret) == holder.secretHash else { return nil }
        if recentlyUsed.value(for: keyID) == nil {
            recentlyUsed.store(true, for: keyID)
            try await store.touch(keyID: keyID)
        }
        return holder
    }
}
