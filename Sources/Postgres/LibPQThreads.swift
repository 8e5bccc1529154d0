import NIOPosix

/// The driver's waiting strategy, kept in this one file: every libpq call blocks, so
/// each runs on a dedicated thread of this pool (one per connection the pool may open)
/// and the calling task suspends until it returns. No libpq call runs on an event loop
/// or on Swift's cooperative pool. Switching to libpq's non-blocking mode with socket
/// readiness would change this file only.
struct LibPQThreads: Sendable {
    private let threads: NIOThreadPool

    init(count: Int) {
        threads = NIOThreadPool(numberOfThreads: max(count, 1))
        threads.start()
    }

    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        do {
            return try await threads.runIfActive(body)
        } catch is NIOThreadPoolError.ThreadPoolInactive {
            throw PostgresError(kind: .poolClosed, message: "the connection pool has been shut down")
        }
    }

    func shutdown() async {
        try? await threads.shutdownGracefully()
    }
}
