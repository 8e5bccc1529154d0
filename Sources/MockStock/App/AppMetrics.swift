import Hummingbird
import Postgres
import Prometheus
import Synchronization

/// The server's Prometheus metrics: requests by route and status, latency, and the
/// database pool.
public struct AppMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    let stream: StreamMetrics
    private let poolConnections: (inUse: Gauge, idle: Gauge, waiting: Gauge)
    /// Reads that may be stale, by the server that answered; replica fallbacks; its lag.
    private let staleReads: (replica: Gauge, primary: Gauge, fallbacks: Gauge, lag: Gauge)
    private let everyCommitReads: (replica: Gauge, primary: Gauge)
    /// Passes of what follows new prices (corporate actions, matching) queued or running.
    let priceFollowUpsPending: Gauge
    private let requestSeries = RequestSeries()

    static let latencyBuckets: [Duration] = [
        .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
        .seconds(2), .seconds(5),
    ]

    static var poolConnectionsMetric: MetricNameDescriptor {
        MetricNameDescriptor(metricName: "db_pool", unitName: "connections", helpText: "Database connections by state")
    }
    static var poolWaitingMetric: MetricNameDescriptor {
        MetricNameDescriptor(metricName: "db_pool", unitName: "waiting", helpText: "Callers waiting for a database connection")
    }
    static var requestsMetric: MetricNameDescriptor {
        MetricNameDescriptor(metricName: "http_requests", unitName: "total", helpText: "HTTP requests by route, method and status")
    }
    static var latencyMetric: MetricNameDescriptor {
        MetricNameDescriptor(metricName: "http_request_duration", unitName: "seconds", helpText: "HTTP request latency")
    }

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        stream = StreamMetrics(registry: registry)
        poolConnections = (
            registry.makeGauge(descriptor: Self.poolConnectionsMetric, labels: [("state", "in_use")]),
            registry.makeGauge(descriptor: Self.poolConnectionsMetric, labels: [("state", "idle")]),
            registry.makeGauge(descriptor: Self.poolWaitingMetric)
        )
        let staleReadsMetric = MetricNameDescriptor(
            metricName: "db_stale_reads", unitName: "total", helpText: "Reads that may be a little stale, by the server that answered them"
        )
        staleReads = (
            registry.makeGauge(descriptor: staleReadsMetric, labels: [("server", "replica")]),
            registry.makeGauge(descriptor: staleReadsMetric, labels: [("server", "primary")]),
            registry.makeGauge(descriptor: MetricNameDescriptor(
                metricName: "db_replica_fallbacks", unitName: "total", helpText: "Replica reads that failed and ran on the primary"
            )),
            registry.makeGauge(descriptor: MetricNameDescriptor(
                metricName: "db_replica_lag", unitName: "seconds", helpText: "How long ago the replica was last known to be current; -1 before a good probe and after a failed one"
            ))
        )
        let everyCommitMetric = MetricNameDescriptor(
            metricName: "db_every_commit_reads", unitName: "total",
            helpText: "Bots' polls of their own account and positions, which must show every acknowledged commit, by the server that answered them"
        )
        everyCommitReads = (
            registry.makeGauge(descriptor: everyCommitMetric, labels: [("server", "replica")]),
            registry.makeGauge(descriptor: everyCommitMetric, labels: [("server", "primary")])
        )
        priceFollowUpsPending = registry.makeGauge(descriptor: MetricNameDescriptor(
            metricName: "price_followups", unitName: "pending",
            helpText: "Passes of corporate actions and order matching after new prices, queued or running"
        ))
    }

    func recordRequest(route: String, method: String, status: Int, duration: Duration) {
        let (counter, histogram) = requestSeries.series(route: route, method: method, status: status) {
            (registry.makeCounter(descriptor: Self.requestsMetric, labels: [("route", route), ("method", method), ("status", String(status))]),
             registry.makeDurationHistogram(descriptor: Self.latencyMetric, labels: [("route", route), ("method", method)],
                                            buckets: Self.latencyBuckets))
        }
        counter.increment()
        histogram.record(duration)
    }

    /// The Prometheus text exposition, with the pool's gauges read now.
    func exposition(pool: PostgresConnectionPool, replica: PostgresReplicaRouter? = nil) -> String {
        let statistics = pool.statistics
        poolConnections.inUse.set(Double(statistics.inUse))
        poolConnections.idle.set(Double(statistics.idle))
        poolConnections.waiting.set(Double(statistics.waiting))
        if let reads = replica?.statistics {
            staleReads.replica.set(Double(reads.replicaReads))
            staleReads.primary.set(Double(reads.primaryReads))
            staleReads.fallbacks.set(Double(reads.fallbacks))
            staleReads.lag.set(reads.lag?.inSeconds ?? -1)
            everyCommitReads.replica.set(Double(reads.everyCommitReplicaReads))
            everyCommitReads.primary.set(Double(reads.everyCommitPrimaryReads))
        }
        return registry.emitToString()
    }
}

/// The live stream's connections and what happens to their events.
struct StreamMetrics: Sendable {
    let clients: Gauge
    let sent: Counter
    /// Quotes replaced by a newer price before they were sent.
    let dropped: Counter
    let slowConsumers: Counter

    init(registry: PrometheusCollectorRegistry) {
        clients = registry.makeGauge(descriptor: MetricNameDescriptor(
            metricName: "stream", unitName: "clients", helpText: "Connected stream clients"
        ))
        sent = registry.makeCounter(descriptor: MetricNameDescriptor(
            metricName: "stream_events_sent", unitName: "total", helpText: "Events written to stream clients"
        ))
        dropped = registry.makeCounter(descriptor: MetricNameDescriptor(
            metricName: "stream_events_dropped", unitName: "total",
            helpText: "Quote events replaced by a newer price before a slow client read them"
        ))
        slowConsumers = registry.makeCounter(descriptor: MetricNameDescriptor(
            metricName: "stream_slow_consumer_disconnects", unitName: "total", helpText: "Stream clients disconnected for falling behind"
        ))
    }
}

/// Records each request's route pattern, method, status and latency.
struct RequestMetricsMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let metrics: AppMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        let response = try await next(request, context)
        // Route patterns keep the label set small; requests that matched no route share one label.
        let route = context.endpointPath.flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "unmatched"
        metrics.recordRequest(
            route: route,
            method: request.method.rawValue,
            status: response.status.code,
            duration: ContinuousClock.now - started
        )
        return response
    }
}

/// Each route's, method's and status's request counter and latency histogram, made once:
/// the registry checks and joins their names and labels on every lookup, a few per cent of
/// a small request's CPU. Routes are patterns, so the table stays small.
final class RequestSeries: Sendable {
    private struct Key: Hashable {
        let route: String
        let method: String
        let status: Int
    }

    private let made = Mutex<[Key: (Counter, DurationHistogram)]>([:])

    func series(
        route: String, method: String, status: Int, make: () -> (Counter, DurationHistogram)
    ) -> (Counter, DurationHistogram) {
        let key = Key(route: route, method: method, status: status)
        if let found = made.withLock({ $0[key] }) { return found }
        let series = make()
        made.withLock { $0[key] = series }
        return series
    }
}
