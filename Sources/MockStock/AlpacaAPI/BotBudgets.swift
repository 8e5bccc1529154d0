import Foundation
import Synchronization

/// Each API key's requests a minute (`BOT_RATE_LIMIT_PER_MINUTE`), shared by every server
/// process and spent from leases: a process takes a share of the key's window in one write
/// (`ThrottleStore.lease`) and counts it down itself, so a bot's request costs a database
/// write once per lease instead of every time.
///
/// The shared budget stays a ceiling: a process spends only what it was granted, and what
/// is left of a lease lapses with the window it was taken in. A lease is a twentieth of
/// the limit (one request below 20 a minute: every request is counted in the database, as
/// before), so a key spread over several processes may be refused up to one lease per
/// other process before its limit, never after it.
final class BotBudgets: Sendable {
    private struct Lease {
        var left: Int
        var lapses: ContinuousClock.Instant
    }

    let store: ThrottleStore
    let requestsPerMinute: Int
    private let leases = Mutex<[String: Lease]>([:])

    init(store: ThrottleStore, requestsPerMinute: Int) {
        self.store = store
        self.requestsPerMinute = requestsPerMinute
    }

    /// Requests one lease grants.
    var leaseSize: Int { max(1, requestsPerMinute / 20) }

    /// Spends one request of the key's budget: nil when it goes ahead, else the seconds
    /// until the key's window ends.
    func spend(keyID: String) async throws -> Int? {
        let now = ContinuousClock.now
        let spent = leases.withLock { leases -> Bool in
            guard var lease = leases[keyID], lease.left > 0, lease.lapses > now else { return false }
            lease.left -= 1
            leases[keyID] = lease
            return true
        }
        if spent { return nil }
        let budget = ThrottleStore.Budget(key: "bot:\(keyID)", limit: requestsPerMinute, window: .seconds(60))
        let (granted, lapsesIn) = try await store.lease(budget, count: leaseSize)
        guard granted > 0 else {
            return max(1, Int((lapsesIn.inSeconds).rounded(.up)))
        }
        let lapses = now + lapsesIn
        leases.withLock { leases in
            if leases.count >= 10_000 {
                leases = leases.filter { $0.value.lapses > now }
            }
            // A lease taken meanwhile by another request of this key, in the same window, is
            // kept with this one; one of an earlier window has lapsed.
            var lease = Lease(left: granted - 1, lapses: lapses)
            if let other = leases[keyID], other.lapses > now, abs((other.lapses - lapses).inSeconds) < 1 {
                lease.left += other.left
                lease.lapses = min(other.lapses, lapses)
            }
            leases[keyID] = lease
        }
        return nil
    }
}
