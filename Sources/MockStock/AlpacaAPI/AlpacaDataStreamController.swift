import Foundation
import Hummingbird
import HummingbirdWebSocket
import NIOCore
import Synchronization

/// `GET /v2/iex` and `GET /v2/sip`: Alpaca's market-data stream (docs/bots.md, "Live
/// prices"), as alpaca-py's `StockDataStream` speaks it. Every server message is an
/// array of objects, in msgpack (binary frames) when the upgrade request says
/// `Content-Type: application/msgpack`, else JSON text. The server greets
/// (`success`/`connected`); the client authenticates with an API key within 10 s; then it
/// subscribes to `trades`, `quotes` and `bars` by symbol (`"*"`: all). Each price stored
/// for a subscribed symbol is a trade and a quote (bid = ask = the price, sizes 1, dated
/// by the price's time); each minute that had prices is a bar once it has ended. Prices
/// come from the live stream's hub like `/api/stream`'s, so every stored price reaches
/// every process's sockets once.
struct AlpacaDataStreamController {
    let stream: StreamController
    let keys: ApiKeyService
    /// Which market a key's portfolio trades in: a scenario league's own (`TradingRules.market`).
    let rules: TradingRulesBook

    /// At most this many symbols per channel on one socket (Alpaca's error 405 beyond).
    static let maxSymbols = 500

    /// The same paths without a WebSocket upgrade, on the main router: `426`.
    static func addPlainRoutes(to router: RouterGroup<AppRequestContext>) {
        for feed in ["iex", "sip"] {
            router.get("v2/\(feed)") { _, _ -> Response in
                throw AppError.upgradeRequired(
                    "GET /v2/\(feed) is Alpaca's market-data WebSocket: connect with alpaca-py's StockDataStream (see docs/bots.md)."
                )
            }
        }
    }

    func addRoutes(to router: Router<StreamRequestContext>) {
        for feed in ["iex", "sip"] {
            router.ws("v2/\(feed)") { inbound, outbound, context in
                let msgpack = context.request.headers[.contentType]?.lowercased().hasPrefix("application/msgpack") ?? false
                await serve(inbound, outbound, channel: context.requestContext.channel, format: msgpack ? .msgpack : .json)
            }
        }
    }

    /// What one socket follows, by channel.
    struct Channels: Sendable, Equatable {
        var trades = SymbolSet()
        var quotes = SymbolSet()
        var bars = SymbolSet()

        /// The hub's view: prices of the symbols of trades and quotes, bars of bars'; a
        /// channel following every symbol names none, so that the hub sends each price once.
        var subscriptions: StreamSubscriptions {
            let allQuotes = trades.all || quotes.all
            return StreamSubscriptions(
                quotes: allQuotes ? [] : trades.symbols.union(quotes.symbols), allQuotes: allQuotes,
                bars: bars.all ? [] : bars.symbols, allBars: bars.all
            )
        }
    }

    /// What one socket follows now: read by the hub's fan-out, changed by the socket's messages.
    final class Followed: Sendable {
        let state = Mutex(Channels())
    }

    /// Symbols, or every symbol (`"*"`).
    struct SymbolSet: Sendable, Equatable {
        var symbols: Set<String> = []
        var all = false

        func contains(_ symbol: String) -> Bool { all || symbols.contains(symbol) }

        var listed: [String] { (all ? ["*"] : []) + Set(symbols.map(Symbol.shown)).sorted() }

        mutating func change(_ names: [String], adding: Bool) {
            for name in names {
                if name == "*" { all = adding } else if adding { symbols.insert(name) } else { symbols.remove(name) }
            }
        }
    }

    private func serve(_ inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter, channel: any Channel, format: AlpacaDataMessage.Format) async {
        var messages = inbound.messages(maxSize: StreamController.maxMessageSize).makeAsyncIterator()
        func send(_ items: [AlpacaDataMessage]) async {
            try? await outbound.write(Self.frame(items, format))
        }
        await send([.success("connected")])
        let deadline = Task {
            try await Task.sleep(for: StreamController.authenticationTimeout)
            try? await outbound.write(Self.frame([.error(404, "auth timeout")], format))
            await StreamController.cutOff(outbound, channel: channel, code: .policyViolation, reason: "auth timeout")
        }
        // Until a key is accepted: only auth is answered; anything else is refused.
        var holder: ApiKeyStore.Holder?
        var credentials = (key: "", secret: "")
        while holder == nil, let message = try? await messages.next() {
            guard let request = AlpacaDataMessage.request(message), let action = request["action"]?.string else {
                await send([.error(400, "invalid syntax")])
                continue
            }
            guard action == "auth" else {
                await send([.error(401, "not authenticated")])
                continue
            }
            credentials = (request["key"]?.string ?? "", request["secret"]?.string ?? "")
            guard let found = try? await keys.holder(keyID: credentials.key, secret: credentials.secret) else {
                deadline.cancel()
                await send([.error(402, "auth failed")])
                try? await outbound.close(.policyViolation, reason: "auth failed")
                return
            }
            holder = found
        }
        deadline.cancel()
        guard let holder, await stream.ready(outbound, channel: channel) else { return }
        let (keyID, secret) = credentials
        // A key of a scenario league's portfolio follows that league's market (its symbols as
        // shown); any other key the real market's.
        let market = try? await rules.rules(userID: holder.userID, portfolioID: holder.portfolioID).market
        let channels = Followed()
        let marketData = StreamSubscriber.MarketData(
            price: { quote in
                guard Self.inMarket(quote.symbol, market) else { return nil }
                let wanted = channels.state.withLock { ($0.trades.contains(quote.symbol), $0.quotes.contains(quote.symbol)) }
                let items = (wanted.0 ? [AlpacaDataMessage.trade(quote)] : []) + (wanted.1 ? [AlpacaDataMessage.quote(quote)] : [])
                return items.isEmpty ? nil : AlpacaDataMessage.encode(items, format)
            },
            bar: { bar in
                guard Self.inMarket(bar.symbol, market) else { return nil }
                return channels.state.withLock { $0.bars.contains(bar.symbol) } ? AlpacaDataMessage.encode([.bar(bar)], format) : nil
            },
            binary: format == .msgpack
        )
        let subscriber = stream.hub.connect(userID: holder.userID, tokenVersion: .max, marketData: marketData)
        defer { stream.hub.disconnect(subscriber) }
        _ = subscriber.enqueue(AlpacaDataMessage.encode([.success("authenticated")], format))
        await stream.run(subscriber, &messages, outbound: outbound, channel: channel) { [keys] in
            await AlpacaStreamController.stopWhenRevoked(subscriber, keyID: keyID, secret: secret, keys: keys)
        } handle: { message in
            let reply = handle(message, channels: channels, market: market ?? nil)
            if let changed = reply.changed { stream.hub.update(subscriber, to: changed.subscriptions) }
            _ = subscriber.enqueue(AlpacaDataMessage.encode([reply.message], format))
        }
    }

    /// Answers a subscribe or unsubscribe with what the socket now follows; anything else
    /// with Alpaca's error.
    private func handle(_ message: WebSocketMessage, channels: Followed, market: Int?) -> (message: AlpacaDataMessage, changed: Channels?) {
        guard let request = AlpacaDataMessage.request(message), let action = request["action"]?.string else {
            return (.error(400, "invalid syntax"), nil)
        }
        switch action {
        case "auth":
            return (.error(403, "already authenticated"), nil)
        case "subscribe", "unsubscribe":
            var asked: [String: [String]] = [:]
            for name in ["trades", "quotes", "bars"] {
                guard let value = request[name] else { continue }
                guard let items = value.array?.compactMap(\.string), items.count == value.array?.count,
                      items.allSatisfy({ $0 == "*" || Symbol.isValid($0) })
                else { return (.error(400, "invalid syntax"), nil) }
                asked[name] = items.map { $0 == "*" ? $0 : Symbol.stored($0, inLeague: market) }
            }
            let adding = action == "subscribe"
            let result = channels.state.withLock { channels -> Channels? in
                var changed = channels
                changed.trades.change(asked["trades"] ?? [], adding: adding)
                changed.quotes.change(asked["quotes"] ?? [], adding: adding)
                changed.bars.change(asked["bars"] ?? [], adding: adding)
                guard [changed.trades, changed.quotes, changed.bars].allSatisfy({ $0.symbols.count <= Self.maxSymbols }) else { return nil }
                channels = changed
                return changed
            }
            guard let result else { return (.error(405, "symbol limit exceeded"), nil) }
            return (.subscription(result), result)
        default:
            return (.error(400, "invalid syntax"), nil)
        }
    }

    /// Whether a stored symbol is of the market `market` names (a scenario league's; nil: the real one).
    static func inMarket(_ symbol: String, _ market: Int?) -> Bool {
        guard let market else { return !Symbol.isLeagues(symbol) }
        return symbol == Symbol.stored(Symbol.shown(symbol), inLeague: market)
    }

    private static func frame(_ items: [AlpacaDataMessage], _ format: AlpacaDataMessage.Format) -> WebSocketOutboundWriter.OutboundFrame {
        let bytes = AlpacaDataMessage.encode(items, format)
        return format == .msgpack ? .binary(bytes) : .text(String(buffer: bytes))
    }
}
