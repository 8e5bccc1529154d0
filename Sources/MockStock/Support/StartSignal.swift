/// A one-time signal one task waits for, e.g. "start-up migrations are done".
final class StartSignal: Sendable {
    private let stream: AsyncStream<Never>
    private let continuation: AsyncStream<Never>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream()
    }

    func open() {
        continuation.finish()
    }

    /// Returns once the signal is open (or the waiting task is cancelled).
    func wait() async {
        for await _ in stream {}
    }
}
