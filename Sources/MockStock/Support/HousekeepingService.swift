import Logging
import ServiceLifecycle

/// Periodic work that no request should wait for: forgetting idempotency keys and
/// login-failure windows long past (every 10 minutes); sweeping orders and corporate
/// actions (every `ORDER_SWEEP_SECONDS`). Every server process runs them; each chore is
/// idempotent or claims its rows, so processes running it at once do no harm.
struct HousekeepingService: Service {
    struct Chore: Sendable {
        let name: String
        let run: @Sendable () async throws -> Void
    }

    let chores: [Chore]
    var interval: Duration = .seconds(600)
    let logger: Logger
    /// Opened when start-up (migrations) is done: chores need the schema.
    let started: StartSignal

    init(chores: [Chore], interval: Duration = .seconds(600), logger: Logger, started: StartSignal) {
        self.chores = chores
        self.interval = interval
        self.logger = logger
        self.started = started
    }

    func run() async throws {
        await cancelWhenGracefulShutdown { await started.wait() }
        await repeatUntilShutdown(every: interval, logger: logger, task: "housekeeping") {
            for chore in chores {
                do {
                    try await chore.run()
                } catch {
                    logger.warning("\(chore.name) failed", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
