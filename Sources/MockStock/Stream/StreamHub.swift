import NIOCore
import Synchronization

/// This process's stream connections and what each follows, indexed so an event finds its
/// subscribers without visiting the others. Events reach the hub once per process (from
/// the database's notifications, see `StreamFeed`); the hub queues each on the connections
/// that follow it, and only on connections of the user it belongs to.
final class StreamHub: Sendable {
    private struct State {
        var subscribers: [Int: StreamSubscriber] = [:]
        var subscriptions: [Int: StreamSubscriptions] = [:]
        var bySymbol: [String: Set<Int>] = [:]
        var allSymbols: Set<Int> = []
        var barsBySymbol: [String: Set<Int>] = [:]
        var allBars: Set<Int> = []
        var ordersByUser: [Int: Set<Int>] = [:]
        var notificationsByUser: [Int: Set<Int>] = [:]
        var byLeague: [Int: Set<Int>] = [:]
        var nextID = 1
    }

    private let state = Mutex(State())
    let metrics: StreamMetrics
    let queueLimit: Int

    init(metrics: StreamMetrics, queueLimit: Int) {
        self.metrics = metrics
        self.queueLimit = queueLimit
    }

    func connect(
        userID: Int, tokenVersion: Int, renderOrder: (@Sendable (OrderChange) -> [StreamMessage])? = nil,
        marketData: StreamSubscriber.MarketData? = nil
    ) -> StreamSubscriber {
        let (subscriber, count) = state.withLock { state in
            let subscriber = StreamSubscriber(
                id: state.nextID, userID: userID, tokenVersion: tokenVersion, limit: queueLimit, renderOrder: renderOrder,
                marketData: marketData
            )
            state.nextID += 1
            state.subscribers[subscriber.id] = subscriber
            state.subscriptions[subscriber.id] = StreamSubscriptions()
            return (subscriber, state.subscribers.count)
        }
        metrics.clients.set(Int64(count))
        return subscriber
    }

    func disconnect(_ subscriber: StreamSubscriber) {
        let count = state.withLock { state in
            if let subscriptions = state.subscriptions[subscriber.id] {
                Self.index(&state, subscriber.id, userID: subscriber.userID, removing: subscriptions)
            }
            state.subscribers[subscriber.id] = nil
            state.subscriptions[subscriber.id] = nil
            return state.subscribers.count
        }
        subscriber.finish()
        metrics.clients.set(Int64(count))
    }

    /// Replaces what a connection follows.
    func update(_ subscriber: StreamSubscriber, to subscriptions: StreamSubscriptions) {
        state.withLock { state in
            guard let old = state.subscriptions[subscriber.id] else { return }
            Self.index(&state, subscriber.id, userID: subscriber.userID, removing: old)
            state.subscriptions[subscriber.id] = subscriptions
            Self.index(&state, subscriber.id, userID: subscriber.userID, adding: subscriptions)
        }
    }

    func subscriptions(of subscriber: StreamSubscriber) -> StreamSubscriptions {
        state.withLock { $0.subscriptions[subscriber.id] ?? StreamSubscriptions() }
    }

    private static func index(_ state: inout State, _ id: Int, userID: Int, adding subscriptions: StreamSubscriptions) {
        for symbol in subscriptions.quotes { state.bySymbol[symbol, default: []].insert(id) }
        for symbol in subscriptions.bars { state.barsBySymbol[symbol, default: []].insert(id) }
        if subscriptions.allQuotes { state.allSymbols.insert(id) }
        if subscriptions.allBars { state.allBars.insert(id) }
        for league in subscriptions.leagues { state.byLeague[league, default: []].insert(id) }
        if subscriptions.orders { state.ordersByUser[userID, default: []].insert(id) }
        if subscriptions.notifications { state.notificationsByUser[userID, default: []].insert(id) }
    }

    private static func index(_ state: inout State, _ id: Int, userID: Int, removing subscriptions: StreamSubscriptions) {
        func remove<Key: Hashable>(_ key: Key, from index: inout [Key: Set<Int>]) {
            index[key]?.remove(id)
            if index[key]?.isEmpty == true { index[key] = nil }
        }
        for symbol in subscriptions.quotes { remove(symbol, from: &state.bySymbol) }
        for symbol in subscriptions.bars { remove(symbol, from: &state.barsBySymbol) }
        if subscriptions.allQuotes { state.allSymbols.remove(id) }
        if subscriptions.allBars { state.allBars.remove(id) }
        for league in subscriptions.leagues { remove(league, from: &state.byLeague) }
        if subscriptions.orders { remove(userID, from: &state.ordersByUser) }
        if subscriptions.notifications { remove(userID, from: &state.notificationsByUser) }
    }

    // MARK: Who follows what

    /// The symbols someone here follows, of those given.
    func followedSymbols(_ symbols: [String]) -> Set<String> {
        state.withLock { state in
            state.allSymbols.isEmpty ? Set(symbols.filter { state.bySymbol[$0] != nil }) : Set(symbols)
        }
    }

    /// Whose minute bars someone here follows: nil for no one's, an empty set for every symbol's.
    func followedBars() -> Set<String>? {
        state.withLock { state in
            if !state.allBars.isEmpty { return [] }
            return state.barsBySymbol.isEmpty ? nil : Set(state.barsBySymbol.keys)
        }
    }

    func followsOrders(userID: Int) -> Bool {
        state.withLock { $0.ordersByUser[userID] != nil }
    }

    /// Whether someone here follows the user's notifications (nil: anyone's, for a broadcast).
    func followsNotifications(userID: Int?) -> Bool {
        state.withLock { state in userID.map { state.notificationsByUser[$0] != nil } ?? !state.notificationsByUser.isEmpty }
    }

    /// Each followed league with the users following it here.
    func followedLeagues() -> [Int: Set<Int>] {
        state.withLock { state in
            state.byLeague.mapValues { ids in Set(ids.compactMap { state.subscribers[$0]?.userID }) }
        }
    }

    var allSubscribers: [StreamSubscriber] {
        state.withLock { Array($0.subscribers.values) }
    }

    /// Stops the user's sockets opened with tokens older than `version` (a logout or a
    /// password change); how many.
    func revoke(userID: Int, before version: Int) -> Int {
        let revoked = allSubscribers.filter { $0.userID == userID && $0.tokenVersion < version }
        for subscriber in revoked { subscriber.stop(.tokenRevoked) }
        return revoked.count
    }

    // MARK: Fan-out

    /// Queues each quote on the connections that follow its symbol: all of a tick's quotes
    /// for one connection at once, so its writer sends them together.
    /// A connection of another protocol (Alpaca's market data) shows each price its own way.
    func publishQuotes(_ quotes: [PublishedQuote]) {
        let byConnection = state.withLock { state in
            var byConnection: [Int: [PublishedQuote]] = [:]
            for quote in quotes {
                for id in state.bySymbol[quote.symbol] ?? [] { byConnection[id, default: []].append(quote) }
                // A connection following every symbol follows none by name (`Channels.subscriptions`).
                for id in state.allSymbols { byConnection[id, default: []].append(quote) }
            }
            return byConnection.compactMap { id, quotes in state.subscribers[id].map { ($0, quotes) } }
        }
        var replaced = 0
        var writers: [StreamSubscriber.Writer] = []
        for (subscriber, quotes) in byConnection {
            let queued = if let marketData = subscriber.marketData {
                subscriber.enqueueQuotes(quotes.compactMap { quote in marketData.price(quote.quote).map { (quote.symbol, $0) } })
            } else {
                subscriber.enqueueQuotes(quotes.lazy.map { ($0.symbol, $0.message) })
            }
            replaced += queued.replaced
            if let writer = queued.wake { writers.append(writer) }
        }
        StreamSubscriber.wake(writers)
        metrics.dropped.increment(by: Int64(replaced))
    }

    /// Finished minute bars, to the connections that follow them.
    func publishBars(_ bars: [MinuteBar]) {
        let targets = state.withLock { state in
            bars.map { bar in
                ((state.barsBySymbol[bar.symbol] ?? []).compactMap { state.subscribers[$0] } + state.allBars.compactMap { state.subscribers[$0] }, bar)
            }
        }
        for (subscribers, bar) in targets {
            for subscriber in subscribers {
                guard let message = subscriber.marketData?.bar(bar) else { continue }
                if !subscriber.enqueue(message) { metrics.slowConsumers.increment() }
            }
        }
    }

    /// A change of an order, to its owner's connections that follow orders: encoded once
    /// for this stream's protocol, and by each connection that speaks another. This
    /// stream sends the order as it is now, once: a change the order has already moved on
    /// from is left to the later change's announcement.
    func publishOrder(_ change: OrderChange, userID: Int) {
        let targets = state.withLock { state in (state.ordersByUser[userID] ?? []).compactMap { state.subscribers[$0] } }
        let own = change.isCurrent ? [StreamEncoding.message("order", change.order)] : []
        for subscriber in targets {
            let messages = if let render = subscriber.renderOrder { render(change) } else { own }
            for message in messages where !subscriber.enqueue(message) {
                metrics.slowConsumers.increment()
                break
            }
        }
    }

    /// A notification for one user, or (nil) for everyone who follows notifications.
    func publishNotification(_ message: StreamMessage, userID: Int?) {
        publish(message) { state in
            userID.map { state.notificationsByUser[$0] ?? [] } ?? state.notificationsByUser.values.reduce(into: []) { $0.formUnion($1) }
        }
    }

    /// A league's standings, to the members among its followers (`members`).
    func publishStandings(_ message: StreamMessage, leagueID: Int, members: Set<Int>) {
        publish(message) { state in
            (state.byLeague[leagueID] ?? []).filter { state.subscribers[$0].map { members.contains($0.userID) } ?? false }
        }
    }

    /// Stops following a league for connections of users who are no longer its members.
    func dropLeague(_ leagueID: Int, keeping members: Set<Int>) -> [StreamSubscriber] {
        state.withLock { state in
            let dropped = (state.byLeague[leagueID] ?? []).compactMap { state.subscribers[$0] }.filter { !members.contains($0.userID) }
            for subscriber in dropped {
                guard var subscriptions = state.subscriptions[subscriber.id] else { continue }
                Self.index(&state, subscriber.id, userID: subscriber.userID, removing: subscriptions)
                subscriptions.leagues.remove(leagueID)
                state.subscriptions[subscriber.id] = subscriptions
                Self.index(&state, subscriber.id, userID: subscriber.userID, adding: subscriptions)
            }
            return dropped
        }
    }

    private func publish(_ message: StreamMessage, to targets: (State) -> Set<Int>) {
        let overflowed = state.withLock { state in
            targets(state).compactMap { state.subscribers[$0] }.filter { !$0.enqueue(message) }
        }
        for _ in overflowed { metrics.slowConsumers.increment() }
    }

    /// Stops connections whose writer has been stuck for longer than `limit`.
    func stopStalled(longerThan limit: Duration) {
        let now = ContinuousClock.now
        for subscriber in allSubscribers where subscriber.isStalled(longerThan: limit, now: now) {
            subscriber.stop(.slowConsumer)
            metrics.slowConsumers.increment()
        }
    }
}
