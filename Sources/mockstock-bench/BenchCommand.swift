import ArgumentParser
import Foundation
import Postgres

@main
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mockstock-bench",
        abstract: "Load generators behind the scripts/bench-* benchmarks.",
        subcommands: [DriverBench.self]
    )
}

/// Point selects by primary key through the pool, the same statement `pgbench -S` runs.
struct DriverBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "driver",
        abstract: "Point selects on pgbench_accounts through the connection pool."
    )

    @Option(help: "libpq connection string of a database initialised by `pgbench -i`.")
    var url: String

    @Option(help: "Concurrent tasks (and pool connections).")
    var concurrency = 8

    @Option(help: "Seconds to run.")
    var seconds = 10

    @Flag(help: "Run the tasks on the pool's I/O thread (withTaskExecutorPreference) instead of the cooperative pool.")
    var onPoolExecutor = false

    func run() async throws {
        var configuration = PostgresConfiguration(connectionString: url)
        configuration.maxConnections = concurrency
        let pool = PostgresConnectionPool(configuration: configuration)
        let accounts = try await pool.query("SELECT count(*) FROM pgbench_accounts").decodeColumn(Int.self)[0]
        // Warm up: open every connection and prepare the statement on it.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<concurrency {
                group.addTask { _ = try await pool.query("SELECT abalance FROM pgbench_accounts WHERE aid = \(1)") }
            }
            try await group.waitForAll()
        }
        let clock = ContinuousClock()
        let started = clock.now
        let deadline = started + .seconds(seconds)
        let latencies = try await withThrowingTaskGroup(of: [Duration].self) { group in
            for _ in 0..<concurrency {
                group.addTask(executorPreference: onPoolExecutor ? pool.executor : nil) {
                    var latencies: [Duration] = []
                    latencies.reserveCapacity(200_000)
                    while clock.now < deadline {
                        let aid = Int.random(in: 1...accounts)
                        let begin = clock.now
                        let rows = try await pool.query("SELECT abalance FROM pgbench_accounts WHERE aid = \(aid)")
                        _ = try rows.decodeColumn(Int32.self)
                        latencies.append(clock.now - begin)
                    }
                    return latencies
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }.sorted()
        }
        let elapsed = clock.now - started
        await pool.close()
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let perSecond = Double(latencies.count) / seconds
        func milliseconds(atPercentile p: Double) -> String {
            let value = latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
            let ms = Double(value.components.seconds) * 1000 + Double(value.components.attoseconds) / 1e15
            return String(format: "%.3f", ms)
        }
        print(
            "driver: \(latencies.count) selects in \(String(format: "%.1f", seconds)) s,"
                + " p50 \(milliseconds(atPercentile: 0.5)) ms, p99 \(milliseconds(atPercentile: 0.99)) ms"
        )
        print("driver_tps=\(String(format: "%.0f", perSecond))")
    }
}
