import Synchronization

/// A clock tests move by hand, for caches that take an injected clock.
final class TestClock: Sendable {
    private let start = ContinuousClock.now
    private let offset = Mutex<Duration>(.zero)

    var now: ContinuousClock.Instant { start + offset.withLock { $0 } }

    func advance(by duration: Duration) {
        offset.withLock { $0 += duration }
    }

    /// The clock as the closure caches take.
    var reader: @Sendable () -> ContinuousClock.Instant { { self.now } }
}
