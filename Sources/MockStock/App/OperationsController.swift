import Foundation
import Hummingbird
import Postgres

/// Routes for operators and load balancers: liveness, readiness, metrics, the API description.
struct OperationsController {
    let pool: PostgresConnectionPool
    var replica: PostgresReplicaRouter? = nil
    let metrics: AppMetrics
    let openAPIFile: URL

    func addRoutes(to router: RouterGroup<AppRequestContext>) {
        router.get("healthz") { _, _ in Status(status: "ok") }
        router.get("readyz", use: readiness)
        router.get("metrics") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: metrics.exposition(pool: pool, replica: replica)))
            )
        }
        router.get("openapi.yaml", use: openAPI)
    }

    struct Status: ResponseEncodable {
        let status: String
    }

    /// 200 while the database answers, 503 otherwise.
    @Sendable func readiness(_ request: Request, context: AppRequestContext) async throws -> Status {
        do {
            try await pool.query("SELECT 1")
        } catch let error as PostgresError {
            context.logger.warning("not ready: database unreachable", metadata: ["error": "\(error.logDescription)"])
            throw AppError.serviceUnavailable("The database is unreachable.")
        }
        return Status(status: "ready")
    }

    @Sendable func openAPI(_ request: Request, context: AppRequestContext) async throws -> Response {
        guard let contents = FileManager.default.contents(atPath: openAPIFile.path) else {
            throw AppError.notFound("The API description is not installed with this server.")
        }
        return Response(
            status: .ok,
            headers: [.contentType: "application/yaml"],
            body: .init(byteBuffer: ByteBuffer(bytes: contents))
        )
    }
}
