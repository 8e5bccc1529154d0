import Foundation
import Logging
import NIOCore
import Postgres
import ServiceLifecycle
import Synchronization

/// Turns the database's announcements (the triggers in `sql/triggers/stream_*.sql` queue
/// them, `announceQueued` sends them) into events for this process's stream clients.
/// Every process listens once, so an event made anywhere reaches every process exactly
/// once and each of its followers once; nothing is sent straight from the process that
/// made it, so there is one path and no duplicate. An
/// announcement names what changed; the feed reads it (through the same stores as the
/// REST routes, for their shapes) only when a client here follows it.
///
/// Standings change with every price, so they are not announced: every
/// `standingsInterval` the feed reads the top of each league followed here and sends it
/// when it changed. A logout or password change is announced too, and closes the sockets
/// of the tokens it revoked. After the listening connection broke (a database restart),
/// every client gets a `gap` event and a fresh snapshot, and every socket's token is
/// checked again.
public final class StreamFeed: Service, Sendable {
    public struct Settings: Sendable {
        /// How often followed leagues' standings are read (`STREAM_STANDINGS_SECONDS`).
        public var standingsInterval: Duration = .seconds(2)
        /// Events (other than quotes) queued per connection before it is cut off (`STREAM_QUEUE_LIMIT`).
        public var queueLimit = 256
        /// How long a connection's writer may be stuck before it is cut off (`STREAM_STALL_SECONDS`).
        public var stallLimit: Duration = .seconds(10)
        /// How often this process announces the events queued in the database
        /// (`STREAM_ANNOUNCE_MS`): the most an event waits before any process hears of it.
        public var announceInterval: Duration = .milliseconds(20)
        /// Standings rows a `standings` event carries.
        static let standingsRows = 20
        /// How long snapshots after a gap wait for the database to answer again.
        static let snapshotPatience: Duration = .seconds(30)

        public init() {}
    }

    static let channel = "mockstock_stream"
    /// Payloads too big for NOTIFY are read as they are announced; ten minutes is long enough.
    static let forgetDeliveredPayloads: PostgresQuery =
        "DELETE FROM stream_payloads WHERE created_at < now() - interval '10 minutes'"

    let hub: StreamHub
    let pool: PostgresConnectionPool
    /// Where `LISTEN` runs: a session of its own on the primary (`DATABASE_DIRECT_URL`).
    let listenPool: PostgresConnectionPool
    let orders: OrderStore
    let notifications: NotificationStore
    let leagues: LeagueService
    let quotes: any QuoteProvider
    let market: MarketStore
    let settings: Settings
    /// Whether a user's tokens of a version are still valid (see `AuthMiddleware.isCurrent`).
    let tokenIsCurrent: @Sendable (_ userID: Int, _ version: Int) async throws -> Bool
    /// Told of a user's tokens revoked (a logout, a new password, an erased account) and of
    /// API keys revoked, by any process: this process's caches forget them at once.
    let forgetCredentials: ForgetCredentials
    let logger: Logger
    let started: StartSignal
    /// Opens once the process listens for announcements: a snapshot read before then could
    /// miss a change announced before the listening began.
    let listening = StartSignal()
    /// Each league's last standings sent, to send only changes.
    private let lastStandings = Mutex<[Int: StreamMessage]>([:])
    /// The last minute whose bars were sent.
    private let lastBars = Mutex<Date?>(nil)

    init(
        hub: StreamHub, pool: PostgresConnectionPool, listenPool: PostgresConnectionPool? = nil, orders: OrderStore, notifications: NotificationStore,
        leagues: LeagueService, quotes: any QuoteProvider, market: MarketStore, settings: Settings,
        tokenIsCurrent: @escaping @Sendable (_ userID: Int, _ version: Int) async throws -> Bool,
        forgetCredentials: ForgetCredentials = .init(), logger: Logger, started: StartSignal
    ) {
        self.tokenIsCurrent = tokenIsCurrent
        self.forgetCredentials = forgetCredentials
        self.hub = hub
        self.pool = pool
        self.listenPool = listenPool ?? pool
        self.orders = orders
        self.notifications = notifications
        self.leagues = leagues
        self.quotes = quotes
        self.market = market
        self.settings = settings
        self.logger = logger
        self.started = started
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown { await self.started.wait() }
        let listener = PostgresListener(pool: listenPool, channels: [Self.channel], logger: logger)
        await withDiscardingTaskGroup { group in
            group.addTask {
                await cancelWhenGracefulShutdown {
                    await listener.run { event in await self.handle(event) }
                }
            }
            group.addTask {
                await repeatUntilShutdown(every: self.settings.announceInterval, logger: self.logger, task: "stream announcements") {
                    try await self.announceQueued()
                }
            }
            group.addTask {
                await repeatUntilShutdown(every: .seconds(1), logger: self.logger, task: "stream stall check") {
                    self.hub.stopStalled(longerThan: self.settings.stallLimit)
                }
            }
            group.addTask {
                await repeatUntilShutdown(every: self.settings.standingsInterval, logger: self.logger, task: "stream standings") {
                    try await self.refreshStandings()
                }
            }
            group.addTask {
                await repeatUntilShutdown(every: .seconds(1), logger: self.logger, task: "stream minute bars") {
                    try await self.publishFinishedBars(now: Date())
                }
            }
        }
    }

    // MARK: Announcements

    /// Announces the events changes have queued (`stream_announce`), a batch per
    /// transaction until none is left. Every process does this; the database lets one at a
    /// time, so a process that stopped leaves nothing unannounced.
    func announceQueued() async throws {
        let batch = 1000
        while try await pool.query("SELECT stream_announce(\(batch))").decodeColumn(Int.self).first == batch {}
    }

    /// An announcement as the triggers write it.
    /// What a process forgets when credentials are revoked anywhere.
    struct ForgetCredentials: Sendable {
        var user: @Sendable (_ userID: Int) -> Void = { _ in }
        var keys: @Sendable (_ keyIDs: [String]) -> Void = { _ in }
    }

    struct Announcement: Decodable {
        let kind: String?
        /// Set instead of everything else when the payload was too big for NOTIFY.
        let ref: Int?
        let user: Int?
        let id: Int?
        let status: String?
        /// For an order: whether it was written with this status (not changed to it), and
        /// after a fill, the portfolio's position in the symbol.
        let inserted: Bool?
        let position: Int?
        /// The shares of an order's fill (a part, or what was left).
        let fill: Int?
        /// The user's token version after a revocation.
        let version: Int?
        /// API keys revoked (`kind` `keys_revoked`).
        let keys: [String]?
        /// `[symbol, name, price, previous close, as of]` per quote.
        let quotes: [[String?]]?
    }

    func handle(_ event: PostgresListener.Event) async {
        switch event {
        case .listening(let afterGap):
            listening.open()
            guard afterGap else { return }
            logger.notice("stream notifications may have been lost; sending every client a snapshot")
            let subscribers = hub.allSubscribers.filter { $0.renderOrder == nil }
            for subscriber in subscribers { _ = subscriber.enqueue(StreamEncoding.gap) }
            await waitUntilPoolAnswers()
            for subscriber in subscribers {
                // A revocation announced during the gap was missed.
                if (try? await tokenIsCurrent(subscriber.userID, subscriber.tokenVersion)) == false {
                    subscriber.stop(.tokenRevoked)
                    continue
                }
                await sendSnapshot(to: subscriber, of: hub.subscriptions(of: subscriber))
            }
        case .notification(_, let payload):
            do {
                var announcement = try JSONDecoder().decode(Announcement.self, from: Data(payload.utf8))
                if let ref = announcement.ref {
                    guard let stored = try await pool.query("SELECT payload::text FROM stream_payloads WHERE id = \(ref)")
                        .decodeColumn(String.self).first
                    else { return }
                    announcement = try JSONDecoder().decode(Announcement.self, from: Data(stored.utf8))
                }
                try await deliver(announcement)
            } catch {
                logger.warning("a stream announcement could not be delivered", metadata: ["error": "\(error)"])
            }
        }
    }

    private func deliver(_ announcement: Announcement) async throws {
        switch announcement.kind {
        case "quotes":
            publishQuotes(announcement.quotes ?? [])
        case "order":
            guard let userID = announcement.user, let id = announcement.id, hub.followsOrders(userID: userID),
                let status = announcement.status.flatMap(OrderStatus.init(rawValue:)),
                let record = try await orders.orders(ids: [id]).first
            else { return }
            hub.publishOrder(
                OrderChange(order: Order(record), announced: status, inserted: announcement.inserted ?? false, positionQuantity: announcement.position,
                            fillQuantity: announcement.fill),
                userID: userID
            )
        case "notification":
            guard let id = announcement.id, hub.followsNotifications(userID: announcement.user),
                let notification = try await notifications.notification(id: id)
            else { return }
            hub.publishNotification(StreamEncoding.message("notification", notification), userID: announcement.user)
        case "revoked":
            guard let userID = announcement.user, let version = announcement.version else { return }
            forgetCredentials.user(userID)
            _ = hub.revoke(userID: userID, before: version)
        case "keys_revoked":
            forgetCredentials.keys(announcement.keys ?? [])
        default:
            return
        }
    }

    private func publishQuotes(_ rows: [[String?]]) {
        // This process's cached prices of these symbols are out of date, followed or not.
        quotes.forget(rows.compactMap { $0.first ?? nil })
        let followed = hub.followedSymbols(rows.compactMap { $0.first ?? nil })
        guard !followed.isEmpty else { return }
        let dates = ISO8601DateFormatter()
        dates.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var published: [PublishedQuote] = []
        for row in rows {
            guard row.count == 5, let symbol = row[0], followed.contains(symbol), let name = row[1],
                let price = row[2].flatMap(Decimal.init(exactly:)), let asOf = row[4].flatMap(dates.date(from:))
            else { continue }
            let quote = PriceQuote(symbol: symbol, price: price, previousClose: row[3].flatMap(Decimal.init(exactly:)), asOf: asOf)
            published.append(PublishedQuote(symbol: symbol, quote: quote, message: StreamEncoding.message("quote", Quote(name: name, quote: quote))))
        }
        hub.publishQuotes(published)
    }

    // MARK: Minute bars

    /// Sends the bars of the minute that ended at least a second ago, once, to the sockets
    /// that follow them (Alpaca's market-data stream). Every process sends its own sockets
    /// theirs, read from `minute_bars`, so each bar goes out once per socket.
    func publishFinishedBars(now: Date) async throws {
        let minute = Date(timeIntervalSince1970: ((now.timeIntervalSince1970 - 1) / 60).rounded(.down) * 60 - 60)
        let due = lastBars.withLock { last in
            defer { last = minute }
            return last.map { $0 < minute } ?? false  // the first pass only notes the minute
        }
        guard due, let followed = hub.followedBars() else { return }
        let bars = try await market.minuteBars(at: minute, symbols: followed.isEmpty ? nil : followed.sorted())
        if !bars.isEmpty { hub.publishBars(bars) }
    }

    // MARK: Standings

    func refreshStandings() async throws {
        let followed = hub.followedLeagues()
        lastStandings.withLock { last in last = last.filter { followed[$0.key] != nil } }
        for (leagueID, userIDs) in followed {
            guard let (page, members) = try await leagues.standings(
                ofLeague: leagueID, forMembers: Array(userIDs), limit: Settings.standingsRows
            ) else {
                drop(leagueID, keeping: [])
                continue
            }
            if members.count < userIDs.count { drop(leagueID, keeping: members) }
            let standings = LeagueStandings(page, leagueID: leagueID)
            let unchanged = lastStandings.withLock { last in
                // The roster's size counts too: a member joining below the rows sent changes no row.
                let key = StreamEncoding.message("standings", RosterKey(items: standings.items, total: standings.total))
                defer { last[leagueID] = key }
                return last[leagueID] == key
            }
            if !unchanged {
                hub.publishStandings(StreamEncoding.message("standings", standings), leagueID: leagueID, members: members)
            }
        }
    }

    /// Stops sending a league to those who left it or were kicked, and tells them.
    private func drop(_ leagueID: Int, keeping members: Set<Int>) {
        let problem = StreamProblem(code: "not_found", detail: "You are no longer a member of league \(leagueID).")
        for subscriber in hub.dropLeague(leagueID, keeping: members) {
            _ = subscriber.enqueue(StreamEncoding.message("error", problem))
        }
    }

    // MARK: Snapshots

    /// After a failover the listener's direct connection may reach the new primary before
    /// the pool does (a pooler reconnects through its balancer a moment later): snapshots
    /// wait for the pool, up to `Settings.snapshotPatience`, rather than fail.
    private func waitUntilPoolAnswers() async {
        let deadline = ContinuousClock.now + Settings.snapshotPatience
        while ContinuousClock.now < deadline, !Task.isCancelled {
            if (try? await pool.query("SELECT 1")) != nil { return }
            try? await Task.sleep(for: .milliseconds(250))
        }
    }

    /// Queues the current state of what `subscriptions` name.
    func sendSnapshot(to subscriber: StreamSubscriber, of subscriptions: StreamSubscriptions) async {
        do {
            var snapshot = StreamSnapshot()
            if !subscriptions.quotes.isEmpty {
                let symbols = subscriptions.quotes.sorted()
                let prices = try await quotes.quotes(for: symbols)
                let names = try await market.names(for: symbols)
                snapshot.quotes = symbols.compactMap { symbol in
                    guard let price = prices[symbol], let name = names[symbol] else { return nil }
                    return Quote(name: name, quote: price)
                }
            }
            if subscriptions.orders {
                snapshot.orders = try await orders.openOrders(userID: subscriber.userID).map(Order.init)
            }
            if subscriptions.notifications {
                snapshot.unreadNotifications = try await notifications.unreadCount(userID: subscriber.userID)
            }
            if !subscriptions.leagues.isEmpty {
                var standings: [LeagueStandings] = []
                for leagueID in subscriptions.leagues.sorted() {
                    guard let (page, _) = try await leagues.standings(
                        ofLeague: leagueID, forMembers: [subscriber.userID], limit: Settings.standingsRows
                    ) else { continue }
                    standings.append(LeagueStandings(page, leagueID: leagueID))
                }
                snapshot.standings = standings
            }
            _ = subscriber.enqueue(StreamEncoding.message("snapshot", snapshot))
        } catch {
            let problem = AppError.problem(for: error, logger: logger)
            _ = subscriber.enqueue(StreamEncoding.message("error", StreamProblem(code: problem.code, detail: problem.detail)))
        }
    }
}

extension LeagueStandings {
    init(_ page: StandingsStore.Page, leagueID: Int) {
        self.init(leagueId: leagueID, items: page.items.map(Standing.init), total: page.total, asOf: page.asOf)
    }
}

/// What makes two `standings` events the same: their rows and the number of members
/// ranked (not the time they were read).
private struct RosterKey: Encodable {
    let items: [Standing]
    let total: Int
}
