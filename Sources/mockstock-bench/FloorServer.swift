import ArgumentParser
import Foundation
import Hummingbird
import Logging
import NIOCore
import Postgres

/// The server floors of `make bench-cost`: a bare Hummingbird 2 application with no
/// middleware. `GET /healthz` answers the JSON MockStock's `/healthz` answers: what any
/// request costs the framework on this machine, measured beside the server.
///
/// With `--database-url` and `--scripts`, `GET /sql/{operation}` runs the statements one
/// request of that operation ran (the pgbench scripts bench-cost captured) through the
/// same driver and pool size as the server, and answers the rows as a JSON array of arrays
/// of strings: what the framework, the driver and the round trips cost for that request,
/// before any of MockStock's own work (authentication, decoding, rules, its JSON).
struct FloorServer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "floor-server",
        abstract: "Serve GET /healthz (and GET /sql/{operation}) from a bare Hummingbird application (the server floors)."
    )

    @Option(help: "Port to listen on (127.0.0.1).")
    var port = 18190

    @Option(help: "PostgreSQL connection string for GET /sql/{operation}.")
    var databaseURL: String?

    @Option(help: "Folder of the captured pgbench scripts, {operation}.sql.")
    var scripts: String?

    @Option(help: "Pool connections (the server's DATABASE_POOL_SIZE).")
    var poolSize = 16

    struct Status: ResponseEncodable {
        let status: String
    }

    func run() async throws {
        let router = Router()
        router.get("healthz") { _, _ in Status(status: "ok") }
        if let databaseURL, let scripts {
            var configuration = PostgresConfiguration(connectionString: databaseURL)
            configuration.maxConnections = poolSize
            let pool = PostgresConnectionPool(configuration: configuration)
            let operations = try CapturedScript.load(from: scripts)
            router.get("sql/:operation") { _, context -> Response in
                guard let script = context.parameters.get("operation").flatMap({ operations[$0] }) else {
                    return Response(status: .notFound)
                }
                var out = ByteBuffer()
                out.writeStaticString("[")
                for (index, statement) in script.statements().enumerated() {
                    if index > 0 { out.writeStaticString(",") }
                    CapturedScript.write(try await pool.query(statement), to: &out)
                }
                out.writeStaticString("]")
                return Response(
                    status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: out)
                )
            }
        }
        var logger = Logger(label: "floor-server")
        logger.logLevel = .warning
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)), logger: logger)
        try await app.runService()
    }
}

/// One operation's statements as bench-cost captured them for pgbench: `\set NAME
/// random(LOW, HIGH)` lines, then one statement a line with its parameters written in,
/// except the variables (`:NAME`), which become bound parameters drawn at each request.
struct CapturedScript: Sendable {
    /// Each statement as the text between its variables, and the variable after each piece.
    let pieces: [[(text: String, variable: String?)]]
    let ranges: [String: ClosedRange<Int>]

    static let operations = ["trade": "trade-buy", "account": "account", "positions": "positions",
                             "portfolio": "portfolio", "quote": "quote", "market": "market"]

    static func load(from folder: String) throws -> [String: CapturedScript] {
        var scripts: [String: CapturedScript] = [:]
        for (operation, file) in operations {
            let path = (folder as NSString).appendingPathComponent("\(file).sql")
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { continue }
            scripts[operation] = try CapturedScript(text)
        }
        return scripts
    }

    init(_ text: String) throws {
        let set = try Regex(#"^\\set (\w+) random\((-?\d+), *(-?\d+)\)$"#)
        var ranges: [String: ClosedRange<Int>] = [:]
        var statements: [String] = []
        for line in text.split(separator: "\n") {
            if let match = try set.wholeMatch(in: line),
               let name = match.output[1].substring, let low = match.output[2].substring.flatMap({ Int($0) }),
               let high = match.output[3].substring.flatMap({ Int($0) }) {
                ranges[String(name)] = low...high
            } else if !line.hasPrefix("\\") {
                statements.append(String(line.hasSuffix(";") ? line.dropLast() : line))
            }
        }
        // A variable is a colon and a declared name not after another colon (`::int` is a cast).
        let names = ranges.keys.sorted { $0.count > $1.count }.joined(separator: "|")
        let variable = try Regex(":(\(names.isEmpty ? "$^" : names))\\b")
        self.ranges = ranges
        self.pieces = statements.map { statement in
            var pieces: [(text: String, variable: String?)] = []
            var rest = statement[...]
            var text = ""
            while let match = rest.firstMatch(of: variable) {
                text += rest[..<match.range.lowerBound]
                if text.last == ":" {
                    text += rest[match.range]
                } else {
                    pieces.append((text, String(rest[match.range].dropFirst())))
                    text = ""
                }
                rest = rest[match.range.upperBound...]
            }
            pieces.append((text + rest, nil))
            return pieces
        }
    }

    /// The statements with this request's values drawn for the variables.
    func statements() -> [PostgresQuery] {
        let values = ranges.mapValues { Int.random(in: $0) }
        return pieces.map { pieces in
            var query = PostgresQuery.StringInterpolation(literalCapacity: 0, interpolationCount: pieces.count)
            for piece in pieces {
                query.appendInterpolation(unescaped: piece.text)
                if let variable = piece.variable { query.appendInterpolation(values[variable] ?? 0) }
            }
            return PostgresQuery(stringInterpolation: query)
        }
    }

    /// The rows as a JSON array of arrays of strings (NULL as null), escaping only what
    /// JSON requires.
    static func write(_ rows: PostgresRows, to out: inout ByteBuffer) {
        out.writeStaticString("[")
        for row in rows.indices {
            if row > 0 { out.writeStaticString(",") }
            out.writeStaticString("[")
            for column in 0..<rows.columns.count {
                if column > 0 { out.writeStaticString(",") }
                guard let bytes = rows[row].cell(column).bytes else {
                    out.writeStaticString("null")
                    continue
                }
                out.writeStaticString("\"")
                guard bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
                    out.writeBytes(bytes)
                    out.writeStaticString("\"")
                    continue
                }
                for byte in bytes {
                    switch byte {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                        out.writeInteger(UInt8(ascii: "\\"))
                        out.writeInteger(byte)
                    case ..<0x20:
                        out.writeString(String(format: "\\u%04x", byte))
                    default:
                        out.writeInteger(byte)
                    }
                }
                out.writeStaticString("\"")
            }
            out.writeStaticString("]")
        }
        out.writeStaticString("]")
    }
}
