import Logging
@testable import MockStock
import Prometheus
import Synchronization
import Testing

@Suite("What follows new prices")
struct PriceFollowUpsTests {
    /// Records each pass's symbols; the first pass waits until released.
    final class Recorder: Sendable {
        let passes = Mutex<[[String]?]>([])
        let gate = AsyncStream<Void>.makeStream()

        func run(_ symbols: [String]?) async {
            let first = passes.withLock { passes in
                passes.append(symbols)
                return passes.count == 1
            }
            if first { for await _ in gate.stream { break } }
        }
    }

    @Test("storing prices returns at once; prices stored during a pass are followed up together by the next, every symbol absorbing the rest")
    func coalesces() async throws {
        let registry = PrometheusCollectorRegistry()
        let gauge = registry.makeGauge(descriptor: MetricNameDescriptor(metricName: "pending"))
        let started = StartSignal()
        let followUps = PriceFollowUps(pending: gauge, started: started, logger: Logger(label: "test"))
        let recorder = Recorder()
        let order = Mutex<[String]>([])
        followUps.set([
            .init(name: "first") { symbols in order.withLock { $0.append("first") }; await recorder.run(symbols) },
            .init(name: "second") { _ in order.withLock { $0.append("second") } },
        ])
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await followUps.run() }
            followUps.tell(["MSFT"])
            #expect(followUps.pending == 1)
            started.open()
            // The first pass holds; everything told meanwhile waits as one pass.
            while recorder.passes.withLock({ $0.count }) == 0 { try await Task.sleep(for: .milliseconds(1)) }
            followUps.tell(["KO"])
            followUps.tell(["AAPL", "KO"])
            #expect(followUps.pending == 2)
            recorder.gate.continuation.yield()
            while followUps.pending > 0 { try await Task.sleep(for: .milliseconds(1)) }
            #expect(recorder.passes.withLock { $0 } == [["MSFT"], ["AAPL", "KO"]])
            // Every symbol, told before or after some symbols, is one pass of every symbol.
            followUps.tell(["PEP"])
            followUps.tell(nil)
            followUps.tell(["KO"])
            while followUps.pending > 0 { try await Task.sleep(for: .milliseconds(1)) }
            let passes = recorder.passes.withLock { $0 }
            #expect(passes.count <= 4 && passes.last == .some(nil), "\(passes)")
            // The listeners run in the order set, every pass.
            #expect(order.withLock { $0 } == Array(repeating: ["first", "second"], count: passes.count).flatMap { $0 })
            group.cancelAll()
        }
    }
}
