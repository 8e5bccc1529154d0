import ArgumentParser
import Foundation
import MockStock
import Postgres

@main
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mockstock-bench",
        abstract: "Load generators behind the scripts/bench-* benchmarks.",
        subcommands: [DriverBench.self, TradeScript.self, StreamBench.self, FloorServer.self]
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
        // Warm up: open every connection and run the statement on it until it is prepared.
        for _ in 0..<configuration.prepareThreshold {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<concurrency {
                    group.addTask { _ = try await pool.query("SELECT abalance FROM pgbench_accounts WHERE aid = \(1)") }
                }
                try await group.waitForAll()
            }
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

/// The server's own trade statement as a pgbench script: a random user buys or sells
/// 1–n shares (`--max-quantity`) of one of the symbols S1...Sn at a fixed price.
struct TradeScript: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pgbench-trade",
        abstract: "Print the buy or sell statement as a pgbench script."
    )

    @Option(help: "buy or sell")
    var side: String

    @Option(help: "Lowest and highest user id, as min:max.")
    var users: String

    @Option(help: "Number of symbols, named S1...Sn.")
    var symbols = 10

    @Option(help: "The fixed price.")
    var price = "100.00"

    @Option(help: "The most shares one trade moves (each trade moves 1...n at random).")
    var maxQuantity = 5

    func run() throws {
        let parts = users.split(separator: ":")
        guard parts.count == 2, let side = TradeSide(rawValue: side), let price = Decimal(string: price) else {
            throw ValidationError("--users min:max, --side buy|sell and a decimal --price")
        }
        let sql = TradeStatement.pgbenchText(side, price: price)
        print("\\set uid random(\(parts[0]), \(parts[1]))")
        print("\\set qty random(1, \(maxQuantity))")
        print("\\set sym random(1, \(symbols))")
        // pgbench reads one statement per line unless it ends with a semicolon.
        print(sql.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ") + ";")
    }
}
