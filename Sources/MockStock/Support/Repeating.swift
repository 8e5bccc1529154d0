import Logging
import ServiceLifecycle

/// Runs `body` now and then every `interval` until graceful shutdown; a failing round is
/// logged and the next one runs as usual. A task failing round after round (the database
/// is away) is logged when it starts failing, then at most every `FailureStreak.quiet`,
/// and once when it succeeds again: not every 20 ms.
func repeatUntilShutdown(every interval: Duration, logger: Logger, task: String, _ body: @escaping @Sendable () async throws -> Void) async {
    try? await cancelWhenGracefulShutdown {
        var streak = FailureStreak()
        while !Task.isCancelled {
            do {
                try await body()
                if let failures = streak.succeeded() {
                    logger.notice("\(task) work again", metadata: ["failed rounds": "\(failures)"])
                }
            } catch {
                if let failures = streak.failed(at: .now) {
                    logger.warning("\(task) failed", metadata: ["error": "\(error)", "failed rounds": "\(failures)"])
                }
            }
            try await Task.sleep(for: interval)
        }
    }
}

/// Which failures of a repeated task are worth a log line.
struct FailureStreak {
    /// The least time between two lines about one streak of failures.
    static let quiet: Duration = .seconds(10)
    private(set) var failures = 0
    private var lastLogged: ContinuousClock.Instant?

    /// The streak's length when this failure should be logged, else nil.
    mutating func failed(at now: ContinuousClock.Instant) -> Int? {
        failures += 1
        if let lastLogged, now - lastLogged < Self.quiet { return nil }
        lastLogged = now
        return failures
    }

    /// The failed rounds before this success, when some were logged; the streak ends.
    mutating func succeeded() -> Int? {
        defer { (failures, lastLogged) = (0, nil) }
        return failures > 1 ? failures : nil
    }
}
