import ArgumentParser
import Foundation
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import NIOCore
import Synchronization

/// Many stream clients at once: each authenticates, follows symbols, and records how long
/// each quote took from its price's moment (`asOf`, set when the tick started) to
/// arrival. Prints delivered events per second and latency percentiles.
struct StreamBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stream",
        abstract: "WebSocket clients following quotes on the live stream."
    )

    @Option(help: "Servers' base URLs (ws://host:port), comma separated; clients are spread over them.")
    var servers: String

    @Option(help: "A file of tokens, one per line; clients use them in turn.")
    var tokens: String

    @Option(help: "A file of symbols, one per line, to follow.")
    var symbols: String

    @Option(help: "Connections to open.")
    var connections = 5000

    @Option(help: "Symbols each connection follows.")
    var follow = 20

    @Option(help: "Seconds to wait after every connection is subscribed, before measuring.")
    var warmup = 3

    @Option(help: "Seconds to measure.")
    var seconds = 20

    @Option(help: "Connections opened at once.")
    var openAtOnce = 100

    /// Arrivals per millisecond of latency, up to `slowest` (the last bucket counts slower ones).
    static let slowest = 5000

    final class Tally: Sendable {
        let state = Mutex((histogram: [Int](repeating: 0, count: StreamBench.slowest + 1), events: 0, failures: 0, subscribed: 0))
        /// The measured window, in Unix milliseconds (none until everyone is subscribed).
        let window = Mutex<(from: Double, to: Double)>((.infinity, .infinity))
    }

    func run() async throws {
        let urls = servers.split(separator: ",").map { "\($0)/api/stream" }
        let tokenList = try String(contentsOfFile: tokens, encoding: .utf8).split(separator: "\n").map(String.init)
        let symbolList = try String(contentsOfFile: symbols, encoding: .utf8).split(separator: "\n").map(String.init)
        guard !urls.isEmpty, !tokenList.isEmpty, symbolList.count >= follow else {
            throw ValidationError("need servers, tokens and at least \(follow) symbols")
        }
        let tally = Tally()
        let clients = connections
        let follow = follow

        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<clients {
                if index >= openAtOnce, index % openAtOnce == 0 {
                    // Open in waves, as a crowd arriving rather than one SYN flood.
                    while tally.state.withLock({ $0.subscribed + $0.failures }) < index - openAtOnce {
                        try await Task.sleep(for: .milliseconds(5))
                    }
                }
                let url = urls[index % urls.count]
                let token = tokenList[index % tokenList.count]
                let followed = (0..<follow).map { symbolList[(index * 7 + $0 * 13) % symbolList.count] }
                group.addTask {
                    do {
                        try await Self.client(url: url, token: token, symbols: followed, tally: tally)
                    } catch {
                        tally.state.withLock { $0.failures += 1 }
                    }
                }
            }
            while tally.state.withLock({ $0.subscribed + $0.failures }) < clients {
                try await Task.sleep(for: .milliseconds(50))
            }
            let (subscribed, failures) = tally.state.withLock { ($0.subscribed, $0.failures) }
            print("connections: \(subscribed) subscribed, \(failures) failed")
            let start = Date().timeIntervalSince1970 + Double(warmup)
            tally.window.withLock { $0 = (start * 1000, (start + Double(seconds)) * 1000) }
            try await Task.sleep(for: .seconds(warmup + seconds))
            print("measured: \(seconds) s")
            group.cancelAll()
        }

        let (histogram, events) = tally.state.withLock { ($0.histogram, $0.events) }
        func percentile(_ fraction: Double) -> String {
            let rank = Int((Double(events) * fraction).rounded(.up))
            var seen = 0
            for (milliseconds, count) in histogram.enumerated() {
                seen += count
                if seen >= rank { return milliseconds == Self.slowest ? ">\(Self.slowest)" : "\(milliseconds)" }
            }
            return "n/a"
        }
        print("events: \(events) (\(events / max(seconds, 1))/s)")
        print("latency ms: p50 \(percentile(0.5)) p90 \(percentile(0.9)) p99 \(percentile(0.99)) max \(percentile(1))")
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        print("client CPU: \(String(format: "%.1f", cpu)) s")
    }

    /// One client: a plain NIO pipeline whose handler reads each frame on its event loop,
    /// without a task per frame, so the measuring costs the machine little.
    private static func client(url: String, token: String, symbols: [String], tally: Tally) async throws {
        let address = url.dropFirst("ws://".count).prefix { $0 != "/" }
        let host = String(address.prefix { $0 != ":" })
        let port = Int(address.drop { $0 != ":" }.dropFirst()) ?? 80
        let list = symbols.map { "\"\($0)\"" }.joined(separator: ",")
        let messages = [#"{"action":"auth","token":"\#(token)"}"#, #"{"action":"subscribe","quotes":[\#(list)]}"#]
        let upgraded: EventLoopFuture<(any Channel)?> = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let upgrader = NIOTypedWebSocketClientUpgrader<(any Channel)?>(maxFrameSize: 1 << 20) { channel, _ in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(QuoteReader(tally: tally))
                            return channel
                        }
                    }
                    var headers = HTTPHeaders()
                    headers.add(name: "Host", value: "\(host):\(port)")
                    let configuration = NIOTypedHTTPClientUpgradeConfiguration(
                        upgradeRequestHead: HTTPRequestHead(version: .http1_1, method: .GET, uri: "/api/stream", headers: headers),
                        upgraders: [upgrader],
                        notUpgradingCompletionHandler: { channel in channel.eventLoop.makeCompletedFuture { nil } }
                    )
                    return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
                        configuration: .init(upgradeConfiguration: configuration)
                    )
                }
            }
        // Written once the upgrade is done and the HTTP handlers are gone.
        guard let channel = try await upgraded.get() else { throw ValidationError("the server refused the WebSocket upgrade") }
        for message in messages {
            let frame = WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: channel.allocator.buffer(string: message))
            try await channel.writeAndFlush(frame)
        }
    }

    /// Times every quote that arrives in the window.
    final class QuoteReader: ChannelInboundHandler, Sendable {
        typealias InboundIn = WebSocketFrame
        typealias OutboundOut = WebSocketFrame

        let tally: Tally
        /// Only touched on the channel's event loop.
        nonisolated(unsafe) var counted = false

        init(tally: Tally) {
            self.tally = tally
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            if frame.opcode == .ping {
                let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData)
                context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
                return
            }
            let arrived = Date().timeIntervalSince1970 * 1000
            // Read in place: on a small machine this client shares the cores with the
            // servers it measures, and every microsecond it spends counts in the latency.
            let (endsSnapshot, quoteAsOf) = frame.data.withUnsafeReadableBytes(StreamBench.scan)
            if !counted, endsSnapshot {
                counted = true
                tally.state.withLock { $0.subscribed += 1 }
            }
            let (from, to) = tally.window.withLock { $0 }
            if arrived > to {
                context.close(promise: nil)
                return
            }
            guard arrived >= from, let asOf = quoteAsOf else { return }
            let latency = min(max(Int(arrived - asOf), 0), StreamBench.slowest)
            tally.state.withLock { state in
                state.events += 1
                state.histogram[latency] += 1
            }
        }
    }

    static let snapshotEnd = Array(#""type":"snapshot"}"#.utf8)
    static let quoteEnd = Array(#""type":"quote"}"#.utf8)
    static let asOfKey = Array(#""asOf":""#.utf8)

    /// Whether a frame ends a snapshot, and a quote frame's `asOf` (nil for any other).
    static func scan(_ bytes: UnsafeRawBufferPointer) -> (endsSnapshot: Bool, quoteAsOf: Double?) {
        if ends(bytes, with: snapshotEnd) { return (true, nil) }
        guard ends(bytes, with: quoteEnd), let start = end(of: asOfKey, in: bytes), start + 23 <= bytes.count else { return (false, nil) }
        return (false, asOf(UnsafeRawBufferPointer(rebasing: bytes[start..<start + 23])))
    }

    static func ends(_ bytes: UnsafeRawBufferPointer, with suffix: [UInt8]) -> Bool {
        bytes.count >= suffix.count
            && suffix.withUnsafeBytes { memcmp(bytes.baseAddress! + (bytes.count - suffix.count), $0.baseAddress!, suffix.count) == 0 }
    }

    /// The index just past the first occurrence of `key` in `bytes`.
    static func end(of key: [UInt8], in bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count >= key.count else { return nil }
        return key.withUnsafeBytes { key in
            for start in 0...(bytes.count - key.count)
            where bytes[start] == key[0] && memcmp(bytes.baseAddress! + start, key.baseAddress!, key.count) == 0 {
                return start + key.count
            }
            return nil
        }
    }

    /// The quote's `asOf` ("YYYY-MM-DDTHH:MM:SS.mmmZ", 23 bytes) in Unix milliseconds.
    static func asOf(_ digits: UnsafeRawBufferPointer) -> Double {
        func number(_ range: Range<Int>) -> Int {
            digits[range].reduce(0) { $0 * 10 + Int($1) - 48 }
        }
        let (year, month, day) = (number(0..<4), number(5..<7), number(8..<10))
        // Days from 1970-01-01 to the civil date (Howard Hinnant's algorithm).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        let milliseconds = ((days * 24 + number(11..<13)) * 60 + number(14..<16)) * 60_000 + number(17..<19) * 1000 + number(20..<23)
        return Double(milliseconds)
    }
}
