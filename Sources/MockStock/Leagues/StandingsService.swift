import Logging
import ServiceLifecycle

/// Keeps league standings: every `refreshInterval` it finishes leagues whose end has
/// passed (final snapshot, notifications, podium), refreshes the snapshots of big
/// leagues that are older than the interval, and records the day's ranks of each league.
/// Every server process runs one; locks in the database share the work out.
public struct StandingsService: Service {
    public struct Settings: Sendable {
        /// Leagues with more members than this are ranked from snapshots (`LEADERBOARD_LIVE_LIMIT`).
        public var liveLimit = 1000
        /// Seconds between rounds, and the most a snapshot may age before it is refreshed
        /// (`LEADERBOARD_REFRESH_SECONDS`).
        public var refreshInterval: Duration = .seconds(5)

        public init() {}
    }

    let store: StandingsStore
    let settings: Settings
    let logger: Logger

    init(store: StandingsStore, settings: Settings, logger: Logger) {
        self.store = store
        self.settings = settings
        self.logger = logger
    }

    /// The first round waits one interval, by which time start-up migrations have run.
    public func run() async throws {
        await repeatUntilShutdown(every: settings.refreshInterval, waitFirst: true, logger: logger, task: "league standings round") {
            try await round()
        }
    }

    func round() async throws {
        let finished = try await store.finishEndedLeagues()
        if !finished.isEmpty { logger.info("leagues finished", metadata: ["leagues": "\(finished)"]) }
        try await store.refreshSnapshots(maxAge: settings.refreshInterval)
        try await store.recordDailyHistory()
    }
}
