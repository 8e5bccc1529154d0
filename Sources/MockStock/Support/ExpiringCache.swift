import Synchronization

/// A per-process cache whose entries expire `lifetime` after they were stored, bounded
/// to `capacity` entries: when full, expired entries are dropped first, then the oldest.
/// The clock is injected, so tests move time instead of sleeping.
final class ExpiringCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Entry {
        let value: Value
        let stored: ContinuousClock.Instant
    }

    let lifetime: Duration
    let capacity: Int
    private let clock: @Sendable () -> ContinuousClock.Instant
    private let entries = Mutex<[Key: Entry]>([:])

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
        return entries.withLock { entries in
            guard let entry = entries[key], now - entry.stored < lifetime else { return nil }
            return entry.value
        }
    }

    /// The unexpired values among `keys`.
    func values(for keys: some Sequence<Key>) -> [Key: Value] {
        let now = clock()
        return entries.withLock { entries in
            var found: [Key: Value] = [:]
            for key in keys {
                if let entry = entries[key], now - entry.stored < lifetime { found[key] = entry.value }
            }
            return found
        }
    }

    /// Stores values read from their source at `read` (default: now), so the time a
    /// slow read took counts against their lifetime.
    func store(_ values: [Key: Value], at read: ContinuousClock.Instant? = nil) {
        let stored = read ?? clock()
        let now = clock()
        entries.withLock { entries in
            for (key, value) in values {
                if entries[key] == nil && entries.count >= capacity { makeRoom(in: &entries, now: now) }
                entries[key] = Entry(value: value, stored: stored)
            }
        }
    }

    func store(_ value: Value, for key: Key, at read: ContinuousClock.Instant? = nil) {
        store([key: value], at: read)
    }

    func removeValue(for key: Key) {
        entries.withLock { _ = $0.removeValue(forKey: key) }
    }

    var count: Int { entries.withLock { $0.count } }

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
