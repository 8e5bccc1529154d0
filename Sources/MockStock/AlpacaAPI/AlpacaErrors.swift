import Foundation
import Hummingbird

/// Under `/v2`, errors take Alpaca's shape: `{"code": <int>, "message": "..."}` with
/// Alpaca's statuses and codes (a status's code is the status × 100,000 + 10,000:
/// 40410000 for 404; 40010001 is a value Alpaca refuses, with 422). The error itself is mapped once, by `AppError.problem(for:)`;
/// this only re-shapes that answer.
struct AlpacaErrorMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            return Self.response(for: AppError.problem(for: error, logger: context.logger))
        }
    }

    /// Alpaca's status and code for one of our problems.
    static func alpaca(_ problem: AppError) -> (status: HTTPResponse.Status, code: Int) {
        switch problem.code {
        case "validation_failed", "order_not_open", "market_closed":
            (.unprocessableContent, 40_010_001)
        case "insufficient_funds", "insufficient_shares", "insufficient_margin", "position_limit", "trading_frozen":
            (.forbidden, 40_310_000)
        default:
            (problem.status, problem.status.code * 100_000 + 10_000)
        }
    }

    static func response(for problem: AppError) -> Response {
        let (status, code) = alpaca(problem)
        var headers = problem.headers
        headers[.contentType] = "application/json"
        // The streaming encoder writes the fields in their declared order, the same bytes
        // every time (Foundation's unsorted order may differ from one process to the next).
        let body = (try? StreamingJSONEncoder().encode(AlpacaError(code: code, message: problem.detail))) ?? []
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    struct AlpacaError: Encodable {
        let code: Int
        let message: String
    }
}
