import Foundation
import Hummingbird
import HTTPTypes

/// Serves the web client (`Public/`, with `index.html` at `/`) and Chart.js from the
/// system's libjs-chart.js under `/vendor/chart.js/`, for paths outside `/api` that no
/// route answers. Files are revalidated by ETag on every load (`no-cache`), so a new
/// release reaches browsers at once, and carry a content security policy that allows
/// nothing but this server.
struct WebClientMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    private let client: FileMiddleware<AppRequestContext, LocalFileSystem>
    private let chartJS: FileMiddleware<AppRequestContext, LocalFileSystem>

    static let securityHeaders: HTTPFields = [
        HTTPField.Name("Content-Security-Policy")!:
            "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
            + "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
        HTTPField.Name("X-Content-Type-Options")!: "nosniff",
        HTTPField.Name("Referrer-Policy")!: "no-referrer",
    ]

    init(publicDirectory: URL, chartJSDirectory: URL) {
        client = FileMiddleware(publicDirectory.path, cacheControl: .init([(.textJavascript, [.noCache]), (.textHtml, [.noCache]), (.textCss, [.noCache])]),
                                searchForIndexHtml: true)
        chartJS = FileMiddleware(chartJSDirectory.path, urlBasePath: "/vendor/chart.js", cacheControl: .init([(.textJavascript, [.public, .maxAge(86_400)])]))
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        guard !(path == "/api" || path.hasPrefix("/api/")) else { return try await next(request, context) }
        var response: Response
        if path.hasPrefix("/join/") {
            // A join link to share: the web client's join screen with the code filled in.
            let code = path.dropFirst("/join/".count)
            let shown = code.count <= 64 && code.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } ? String(code) : ""
            response = Response(status: .seeOther, headers: [.location: "/#/leagues?join=\(shown)"])
        } else if path.hasPrefix("/vendor/chart.js/") {
            response = try await chartJS.handle(request, context: context, next: next)
        } else {
            response = try await client.handle(request, context: context, next: next)
        }
        for field in Self.securityHeaders where response.headers[field.name] == nil {
            response.headers.append(field)
        }
        return response
    }
}
