import Logging
import ServiceLifecycle

/// Keeps league standings: every second it finishes leagues whose end has passed (final
/// snapshot, notifications, podium) and records the day's ranks of each league; every
/// `snapshotCheckInterval` it refreshes the snapshots of big leagues that are older than
/// `refreshInterval` while what they rank changes (or older than `unchangedInterval`),
/// so a league whose refresh takes longer than the interval is refreshed back to back;
/// every `priceAchievementInterval` it awards the achievements that prices earn. Every
/// server process runs one; locks in the database share the work out.
public struct StandingsService: Service {
    public struct Settings: Sendable {
        /// Leagues with more members than this are ranked from snapshots (`LEADERBOARD_LIVE_LIMIT`).
        public var liveLimit = 250
        /// The age at which a big league's snapshot is refreshed if what it ranks may have
        /// changed (`LEADERBOARD_REFRESH_SECONDS`).
        public var refreshInterval: Duration = .seconds(1)
        /// The age at which it is refreshed regardless (`LEADERBOARD_UNCHANGED_SECONDS`).
        public var unchangedInterval: Duration = .seconds(60)
        /// Time between looks for due snapshots.
        public var snapshotCheckInterval: Duration = .milliseconds(250)
        /// Time between rounds.
        public var roundInterval: Duration = .seconds(1)
        /// Time between checks for "Up fifty percent" (a valuation of every portfolio).
        public var priceAchievementInterval: Duration = .seconds(60)
        /// Time between looks for leagues whose members' risk figures are due (`LeagueRiskService`).
        public var riskCheckInterval: Duration = .seconds(5)
        /// The age at which a league's risk figures are computed again; a league ranked
        /// from snapshots waits `bigRiskInterval`.
        public var riskInterval: Duration = .seconds(60)
        public var bigRiskInterval: Duration = .seconds(900)

        public init() {}
    }

    let store: StandingsStore
    let achievements: AchievementStore
    let settings: Settings
    let logger: Logger
    /// Opened when start-up (migrations) is done: rounds need the schema.
    let started: StartSignal

    init(store: StandingsStore, achievements: AchievementStore, settings: Settings, logger: Logger, started: StartSignal) {
        self.store = store
        self.achievements = achievements
        self.settings = settings
        self.logger = logger
        self.started = started
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown { await started.wait() }
        await withDiscardingTaskGroup { group in
            group.addTask {
                await repeatUntilShutdown(every: settings.roundInterval, logger: logger, task: "league standings round") {
                    try await round()
                }
            }
            group.addTask {
                await repeatUntilShutdown(every: settings.snapshotCheckInterval, logger: logger, task: "league snapshots") {
                    try await store.refreshSnapshots(maxAge: settings.refreshInterval, unchangedAge: settings.unchangedInterval)
                }
            }
            group.addTask {
                await repeatUntilShutdown(every: settings.priceAchievementInterval, logger: logger, task: "price achievements") {
                    try await achievements.awardPriceAchievements()
                }
            }
        }
    }

    func round() async throws {
        let finished = try await store.finishEndedLeagues()
        if !finished.isEmpty { logger.info("leagues finished", metadata: ["leagues": "\(finished)"]) }
        try await store.recordDailyHistory()
    }
}
