import ArgumentParser
import Hummingbird
import Logging

/// The server floor of `make bench-cost`: a bare Hummingbird 2 application with one route,
/// `GET /healthz`, answering the JSON MockStock's `/healthz` answers, with no middleware.
/// What any request costs the framework on this machine, measured beside the server.
struct FloorServer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "floor-server",
        abstract: "Serve GET /healthz from a bare Hummingbird application (the server floor)."
    )

    @Option(help: "Port to listen on (127.0.0.1).")
    var port = 18190

    struct Status: ResponseEncodable {
        let status: String
    }

    func run() async throws {
        let router = Router()
        router.get("healthz") { _, _ in Status(status: "ok") }
        var logger = Logger(label: "floor-server")
        logger.logLevel = .warning
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)), logger: logger)
        try await app.runService()
    }
}
