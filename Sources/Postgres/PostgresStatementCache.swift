/// The prepared statements of one connection, bounded.
///
/// A statement is prepared once it has run `prepareThreshold` times (psycopg's rule), so
/// one-off statements never take a slot; at most `capacity` stay prepared, and preparing
/// one more evicts the least recently used, whose name is queued for `DEALLOCATE` on the
/// server (sent by the connection when no transaction is open). Hits, the hot path, cost
/// one dictionary lookup; only a miss on a full cache (or a new statement when the run
/// counts are full) scans for the oldest entry.
struct PostgresStatementCache {
    struct Key: Hashable {
        let sql: String
        let types: [PostgresDataType]
    }

    enum Decision: Equatable {
        /// Run the statement prepared under this name.
        case execute(name: String)
        /// Prepare it under this name, run it, and report `prepared(_:as:)`.
        case prepare(name: String)
        /// Run it unprepared (not yet run often enough, or caching is off).
        case runUnprepared
    }

    let capacity: Int
    let prepareThreshold: Int
    private struct Use {
        /// The prepared statement's name, or how often the statement has run unprepared.
        var name = ""
        var runs = 0
        var lastUse: UInt64
    }

    private var prepared: [Key: Use] = [:]
    /// Statements not (yet) prepared, with how often they ran; at most `4 × capacity`.
    private var runs: [Key: Use] = [:]
    private var clock: UInt64 = 0
    private var statementsNamed = 0
    /// Evicted statements still prepared on the server.
    private var pendingDeallocations: [String] = []

    init(capacity: Int, prepareThreshold: Int) {
        self.capacity = max(capacity, 0)
        self.prepareThreshold = max(prepareThreshold, 1)
    }

    mutating func decide(_ key: Key) -> Decision {
        clock += 1
        if let index = prepared.index(forKey: key) {
            prepared.values[index].lastUse = clock
            return .execute(name: prepared.values[index].name)
        }
        guard capacity > 0 else { return .runUnprepared }
        let count = (runs[key]?.runs ?? 0) + 1
        guard count >= prepareThreshold else {
            if runs[key] == nil, runs.count >= capacity * 4, let oldest = Self.oldest(in: runs) { runs[oldest] = nil }
            runs[key] = Use(runs: count, lastUse: clock)
            return .runUnprepared
        }
        runs[key] = nil
        if prepared.count >= capacity, let oldest = Self.oldest(in: prepared) {
            pendingDeallocations.append(prepared.removeValue(forKey: oldest)!.name)
        }
        statementsNamed += 1
        return .prepare(name: "s\(statementsNamed)")
    }

    mutating func prepared(_ key: Key, as name: String) {
        prepared[key] = Use(name: name, lastUse: clock)
    }

    /// Drops a statement the server can no longer run as prepared (its result type changed).
    mutating func forget(_ key: Key) {
        if let entry = prepared.removeValue(forKey: key) { pendingDeallocations.append(entry.name) }
    }

    /// The `DEALLOCATE` script for the queued names, which are then forgotten.
    mutating func takeDeallocations() -> String? {
        guard !pendingDeallocations.isEmpty else { return nil }
        defer { pendingDeallocations.removeAll() }
        return pendingDeallocations.map { "DEALLOCATE \($0)" }.joined(separator: "; ")
    }

    /// A new session has no prepared statements.
    mutating func reset() {
        prepared.removeAll()
        runs.removeAll()
        pendingDeallocations.removeAll()
        statementsNamed = 0
    }

    private static func oldest(in entries: [Key: Use]) -> Key? {
        entries.min { $0.value.lastUse < $1.value.lastUse }?.key
    }
}
