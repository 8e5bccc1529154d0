import Logging
import ServiceLifecycle

/// Runs `body` now and then every `interval` until graceful shutdown; a failing round is
/// logged and the next one runs as usual.
func repeatUntilShutdown(every interval: Duration, logger: Logger, task: String, _ body: @escaping @Sendable () async throws -> Void) async {
    try? await cancelWhenGracefulShutdown {
        while !Task.isCancelled {
            do {
                try await body()
            } catch {
                logger.warning("\(task) failed", metadata: ["error": "\(error)"])
            }
            try await Task.sleep(for: interval)
        }
    }
}
