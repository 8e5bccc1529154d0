import Synchronization

/// A per-process cache whose entries expire `lifetime` after they were stored, bounded
/// to `capacity` entries: when full, expired entries are dropped first, then the oldest.
/// The clock is injected, so tests move time instead of sleeping. A key forgotten (its
/// source changed) is not stored again from a read that began before the forgetting.
final class ExpiringCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Entry {
        let value: Value
        let stored: ContinuousClock.Instant
    }

    let lifetime: Duration
    let capacity: Int
    private let clock: @Sendable () -> ContinuousClock.Instant
    private struct State {
        var entries: [Key: Entry] = [:]
        /// When each key was last forgotten, until a newer read is stored for it.
        var forgotten: [Key: ContinuousClock.Instant] = [:]
        /// When every key was last forgotten.
        var allForgotten: ContinuousClock.Instant?
    }

    private let state = Mutex(State())

    init(lifetime: Duration, capacity: Int, clock: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.lifetime = lifetime
        self.capacity = max(capacity, 1)
        self.clock = clock
    }

    /// What the cache's clock says now: the time to pass to `store(_:for:at:)` for a value
    /// read from its source now.
    var now: ContinuousClock.Instant { clock() }

    /// The value stored for `key` unless it has expired.
    func value(for key: Key) -> Value? {
        let now = clock()
        return state.withLock { state in
            guard let entry = state.entries[key], now - entry.stored < lifetime else { return nil }
            return entry.value
        }
    }

    /// The unexpired values among `keys`.
    func values(for keys: some Sequence<Key>) -> [Key: Value] {
        let now = clock()
        return state.withLock { state in
            var found: [Key: Value] = [:]
            for key in keys {
                if let entry = state.entries[key], now - entry.stored < lifetime { found[key] = entry.value }
            }
            return found
        }
    }

    /// The values of `keys`: the unexpired ones from here, the rest read through `load`
    /// (given only the missing keys) and kept.
    func values(for keys: [Key], loadingMissing load: ([Key]) async throws -> [Key: Value]) async throws -> [Key: Value] {
        let read = clock()
        let cached = values(for: keys)
        let missing = keys.filter { cached[$0] == nil }
        guard !missing.isEmpty else { return cached }
        let fresh = try await load(missing)
        store(fresh, at: read)
        return cached.merging(fresh) { $1 }
    }

    /// Stores values read from their source at `read` (default: now), so the time a
    /// slow read took counts against their lifetime.
    func store(_ values: [Key: Value], at read: ContinuousClock.Instant? = nil) {
        let stored = read ?? clock()
        let now = clock()
        state.withLock { state in
            // A read that began before every source changed is stale already.
            if let allForgotten = state.allForgotten, stored < allForgotten { return }
            for (key, value) in values {
                if let forgotten = state.forgotten[key] {
                    // A read that began before its source changed is stale already.
                    guard forgotten <= stored else { continue }
                    state.forgotten.removeValue(forKey: key)
                }
                if state.entries[key] == nil && state.entries.count >= capacity { makeRoom(in: &state.entries, now: now) }
                state.entries[key] = Entry(value: value, stored: stored)
            }
        }
    }

    func store(_ value: Value, for key: Key, at read: ContinuousClock.Instant? = nil) {
        store([key: value], at: read)
    }

    func removeValue(for key: Key) {
        state.withLock { _ = $0.entries.removeValue(forKey: key) }
    }

    /// Drops `keys` because their source changed: the next read of each goes to the
    /// source, and a read already under way is not stored.
    func forget(_ keys: some Sequence<Key>) {
        let now = clock()
        state.withLock { state in
            for key in keys {
                state.entries.removeValue(forKey: key)
                if state.forgotten[key] == nil && state.forgotten.count >= capacity { state.forgotten.removeAll() }
                state.forgotten[key] = now
            }
        }
    }

    /// Drops every key because every source changed: reads already under way are not stored.
    func forgetAll() {
        let now = clock()
        state.withLock { state in
            state.entries.removeAll()
            state.forgotten.removeAll()
            state.allForgotten = now
        }
    }

    var count: Int { state.withLock { $0.entries.count } }

    /// Drops every expired entry (a sweep pays for the many inserts until the next one),
    /// or the oldest entry when none has expired.
    private func makeRoom(in entries: inout [Key: Entry], now: ContinuousClock.Instant) {
        let before = entries.count
        entries = entries.filter { now - $0.value.stored < lifetime }
        if entries.count == before, let oldest = entries.min(by: { $0.value.stored < $1.value.stored })?.key {
            entries.removeValue(forKey: oldest)
        }
    }
}
