import CLibPQ
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One libpq connection in non-blocking mode, driven as a state machine by the
/// `PostgresEventLoop` thread: `start(_:)` begins a request, `resume()` continues it when
/// the socket is ready, and each returns what to wait for next or the outcome.
///
/// `@unchecked Sendable` is sound because only the event loop's thread calls into it
/// (every method below), and the pool hands a connection to one lease at a time, whose
/// requests reach the loop one after another. The one field other threads touch,
/// `needsCheck`, is written by the pool before a lease's first request is submitted,
/// and the loop's submission lock orders that write before the loop reads it.
final class PostgresConnection: @unchecked Sendable {
    /// What a lease asks the connection to do.
    enum Request: Sendable {
        case query(PostgresQuery)
        /// Trusted SQL text that may hold several statements (migrations, BEGIN, COMMIT).
        case script(String)
        case copyBegin(String)
        case copyData([UInt8])
        case copyEnd(abortReason: String?)
        /// Waits until notifications (from `LISTEN`) arrive or `deadline` passes, and
        /// answers them as rows of `(channel text, payload text, process_id int4)`:
        /// none when the deadline passed first.
        case awaitNotifications(deadline: ContinuousClock.Instant)
        case close
    }

    /// What the loop should do next for this connection.
    enum Progress {
        case waitForRead
        case waitForWrite
        /// Output is queued: wait until it can be sent, reading meanwhile so the server
        /// never blocks writing to us.
        case waitForReadOrWrite
        case done(Result<PostgresRows, PostgresError>)
    }

    let configuration: PostgresConfiguration
    /// Set by the pool on each lease, so the lease's first request checks the connection first.
    var needsCheck = true
    /// When an open attempt gives up (`connect_timeout` is not enforced by non-blocking
    /// libpq), or a wait for notifications ends empty.
    private(set) var deadline: ContinuousClock.Instant?

    private var handle: OpaquePointer?
    private var statements: PostgresStatementCache
    private var state: State = .idle

    private enum State {
        case idle
        /// Opening a connection; `request` runs once it is open.
        case connecting(request: Request)
        /// Sending queued output; then receiving results for `step`.
        case flushing(Step)
        case receiving(Step, results: [OpaquePointer])
        /// Waiting for room to queue COPY data or the end of COPY.
        case copying(Request)
        /// Waiting for notifications until `deadline`.
        case listening
    }

    /// A command sent to the server whose results are being awaited.
    private enum Step {
        /// Deallocating evicted prepared statements, then starting `request`.
        case deallocate(then: Request)
        /// Preparing the query as `name` (cached under `key`), then running it.
        case prepare(name: String, key: PostgresStatementCache.Key, then: PostgresQuery)
        case execute
        /// Running a cached prepared statement.
        case executePrepared(PostgresStatementCache.Key, PostgresQuery)
        /// Waiting for the server to enter COPY IN.
        case copyBegin
        /// Flushing COPY data; no results follow.
        case copyData
    }

    init(configuration: PostgresConfiguration) {
        self.configuration = configuration
        statements = PostgresStatementCache(
            capacity: configuration.effectiveStatementCacheCapacity, prepareThreshold: configuration.prepareThreshold
        )
    }

    deinit {
        if let handle { PQfinish(handle) }
    }

    var socket: Int32 { handle.map { PQsocket($0) } ?? -1 }

    // MARK: Driving requests

    func start(_ request: Request) -> Progress {
        if case .close = request {
            close()
            return .done(.success(.empty))
        }
        if needsCheck {
            needsCheck = false
            if !isHealthy { return open(then: request) }
        }
        guard let handle else {
            return fail(PostgresError(kind: .connection, code: .connectionFailure, message: "connection is closed"))
        }
        return begin(request, handle)
    }

    func resume() -> Progress {
        guard let handle else {
            return fail(PostgresError(kind: .connection, code: .connectionFailure, message: "connection is closed"))
        }
        switch state {
        case .idle:
            return .done(.success(.empty))
        case .connecting(let request):
            return pollConnect(request)
        case .flushing(let step):
            return flush(step, handle)
        case .receiving(let step, let results):
            guard PQconsumeInput(handle) == 1 else { return fail(PostgresError(connection: handle), clearing: results) }
            return receive(step, results, handle)
        case .copying(let request):
            guard PQconsumeInput(handle) == 1 else { return fail(PostgresError(connection: handle)) }
            return begin(request, handle)
        case .listening:
            // End-of-file here is the server going away: the listener must open anew.
            guard PQconsumeInput(handle) == 1 else {
                let error = PostgresError(connection: handle)
                close()
                return fail(error)
            }
            return deliverNotifications(handle) ?? .waitForRead
        }
    }

    /// Ends what waited past its deadline: an open attempt fails, a wait for notifications
    /// answers none.
    func timeOut() -> Progress {
        if case .listening = state {
            deadline = nil
            state = .idle
            return .done(.success(PostgresRows(notifications: [])))
        }
        close()
        return fail(PostgresError(
            kind: .connection, code: .connectionException,
            message: "timed out after \(configuration.connectTimeoutSeconds) s opening a connection"
        ))
    }

    /// The notifications libpq has read, as rows, ending the wait; nil when there are none.
    private func deliverNotifications(_ handle: OpaquePointer) -> Progress? {
        var notifications: [PostgresRows.Notification] = []
        while let notice = PQnotifies(handle) {
            notifications.append(PostgresRows.Notification(
                channel: String(cString: notice.pointee.relname),
                payload: String(cString: notice.pointee.extra),
                processID: notice.pointee.be_pid
            ))
            PQfreemem(notice)
        }
        guard !notifications.isEmpty else { return nil }
        deadline = nil
        state = .idle
        return .done(.success(PostgresRows(notifications: notifications)))
    }

    private func begin(_ request: Request, _ handle: OpaquePointer) -> Progress {
        switch request {
        case .query(let query):
            // Evicted statements are deallocated between transactions, where a failure
            // cannot abort anything.
            if PQtransactionStatus(handle) == PQTRANS_IDLE, let script = statements.takeDeallocations() {
                return send(.deallocate(then: request), handle) { PQsendQuery(handle, script) == 1 }
            }
            let types = query.binds.map(\.dataType)
            let key = PostgresStatementCache.Key(sql: query.sql, types: types)
            switch statements.decide(key) {
            case .execute(let name):
                return send(.executePrepared(key, query), handle) { try sendPrepared(name, query, handle) }
            case .runUnprepared:
                return send(.execute, handle) { try sendUnprepared(query, handle) }
            case .prepare(let name):
                let oids = types.map { Oid($0.rawValue) }
                return send(.prepare(name: name, key: key, then: query), handle) {
                    PQsendPrepare(handle, name, query.sql, Int32(oids.count), oids) == 1
                }
            }
        case .script(let sql):
            return send(.execute, handle) { PQsendQuery(handle, sql) == 1 }
        case .copyBegin(let sql):
            return send(.copyBegin, handle) { PQsendQuery(handle, sql) == 1 }
        case .copyData(let bytes):
            let queued = bytes.withUnsafeBytes { buffer in
                PQputCopyData(handle, buffer.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(buffer.count))
            }
            return copyProgress(queued, request, .copyData, handle)
        case .copyEnd(let abortReason):
            return copyProgress(PQputCopyEnd(handle, abortReason), request, .execute, handle)
        case .awaitNotifications(let until):
            // Some may have arrived with the replies to earlier commands.
            if let delivered = deliverNotifications(handle) { return delivered }
            deadline = until
            state = .listening
            return .waitForRead
        case .close:
            close()
            return .done(.success(.empty))
        }
    }

    private func copyProgress(_ queued: Int32, _ request: Request, _ step: Step, _ handle: OpaquePointer) -> Progress {
        switch queued {
        case 1: return flush(step, handle)
        case 0:
            state = .copying(request)
            return .waitForReadOrWrite
        default: return fail(PostgresError(connection: handle))
        }
    }

    private func send(_ step: Step, _ handle: OpaquePointer, _ body: () throws -> Bool) -> Progress {
        do {
            guard try body() else { return fail(PostgresError(connection: handle)) }
        } catch let error as PostgresError {
            return fail(error)
        } catch {
            return fail(PostgresError(kind: .encoding, message: "\(error)"))
        }
        return flush(step, handle)
    }

    private func flush(_ step: Step, _ handle: OpaquePointer) -> Progress {
        switch PQflush(handle) {
        case 0:
            if case .copyData = step {
                state = .idle
                return .done(.success(.empty))
            }
            return receive(step, [], handle)
        case 1:
            // The server may be blocked writing to us: read what it sent before writing on.
            guard PQconsumeInput(handle) == 1 else { return fail(PostgresError(connection: handle)) }
            state = .flushing(step)
            return .waitForReadOrWrite
        default:
            return fail(PostgresError(connection: handle))
        }
    }

    /// Collects results until libpq has none left (or COPY IN starts), then finishes the step.
    private func receive(_ step: Step, _ collected: [OpaquePointer], _ handle: OpaquePointer) -> Progress {
        var results = collected
        while PQisBusy(handle) == 0 {
            guard let result = PQgetResult(handle) else {
                return finish(step, results, handle)
            }
            results.append(result)
            let status = PQresultStatus(result)
            if status == PGRES_COPY_IN || status == PGRES_COPY_OUT || status == PGRES_COPY_BOTH {
                return finish(step, results, handle)
            }
        }
        state = .receiving(step, results: results)
        return .waitForRead
    }

    private func finish(_ step: Step, _ results: [OpaquePointer], _ handle: OpaquePointer) -> Progress {
        defer { results.forEach { PQclear($0) } }
        if case .deallocate(let request) = step {
            // A statement that could not be deallocated is gone with the session at worst.
            state = .idle
            return begin(request, handle)
        }
        // The first error wins; otherwise the last result is the answer.
        if let failed = results.first(where: { !Self.succeeded(PQresultStatus($0)) && PQresultStatus($0) != PGRES_COPY_IN }) {
            let error = PostgresError(result: failed, handle: handle)
            if case .executePrepared(let key, let query) = step, error.code == .featureNotSupported {
                // "cached plan must not change result type": the schema changed under a
                // prepared statement. Forget it; outside a transaction block nothing was
                // done, so prepare it afresh and run it again at once.
                statements.forget(key)
                if PQtransactionStatus(handle) == PQTRANS_IDLE {
                    state = .idle
                    return begin(.query(query), handle)
                }
                return fail(error)
            }
            return fail(error)
        }
        switch step {
        case .prepare(let name, let key, let query):
            statements.prepared(key, as: name)
            return send(.execute, handle) { try sendPrepared(name, query, handle) }
        case .copyBegin:
            guard results.last.map({ PQresultStatus($0) == PGRES_COPY_IN }) == true else {
                return fail(PostgresError(kind: .unexpectedResponse, message: "the statement did not start COPY FROM STDIN"))
            }
            state = .idle
            return .done(.success(.empty))
        case .execute, .executePrepared, .copyData:
            state = .idle
            return .done(.success(results.last.map(PostgresRows.init(copying:)) ?? .empty))
        case .deallocate:
            preconditionFailure("handled above")
        }
    }

    private static func succeeded(_ status: ExecStatusType) -> Bool {
        status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK || status == PGRES_EMPTY_QUERY
    }

    private func fail(_ error: PostgresError, clearing results: [OpaquePointer] = []) -> Progress {
        results.forEach { PQclear($0) }
        state = .idle
        return .done(.failure(error))
    }

    private func sendPrepared(_ name: String, _ query: PostgresQuery, _ handle: OpaquePointer) throws -> Bool {
        try ParameterBuffer(query.binds).withPointers { values, lengths, formats in
            PQsendQueryPrepared(handle, name, Int32(query.binds.count), values, lengths, formats, 0) == 1
        }
    }

    private func sendUnprepared(_ query: PostgresQuery, _ handle: OpaquePointer) throws -> Bool {
        let oids = query.binds.map { Oid($0.dataType.rawValue) }
        return try ParameterBuffer(query.binds).withPointers { values, lengths, formats in
            PQsendQueryParams(handle, query.sql, Int32(query.binds.count), oids, values, lengths, formats, 0) == 1
        }
    }

    // MARK: Opening and health

    /// Open, idle, and nothing unexpected on the socket: an idle connection never has
    /// anything to read, so bytes or end-of-file mean the server sent a termination
    /// notice or went away (restart, `pg_terminate_backend`, network loss).
    private var isHealthy: Bool {
        guard let handle, PQstatus(handle) == CONNECTION_OK, PQtransactionStatus(handle) == PQTRANS_IDLE else {
            return false
        }
        var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) == 0
    }

    private func open(then request: Request) -> Progress {
        close()
        let parameters: [(String, String)]
        do {
            parameters = configuration.connectionParameters(parsed: try configuration.parsedConnectionString())
        } catch let error as PostgresError {
            return fail(error)
        } catch {
            return fail(PostgresError(kind: .connection, message: "\(error)"))
        }
        let keys = parameters.map { strdup($0.0) }
        let values = parameters.map { strdup($0.1) }
        defer {
            keys.forEach { free($0) }
            values.forEach { free($0) }
        }
        let keyPointers = keys.map { UnsafePointer($0) } + [nil]
        let valuePointers = values.map { UnsafePointer($0) } + [nil]
        guard let connection = PQconnectStartParams(keyPointers, valuePointers, 0) else {
            return fail(PostgresError(kind: .connection, code: .connectionException, message: "libpq could not allocate a connection"))
        }
        handle = connection
        guard PQstatus(connection) != CONNECTION_BAD else {
            let error = PostgresError(connection: connection, code: .connectionException)
            close()
            return fail(error)
        }
        deadline = .now + .seconds(max(configuration.connectTimeoutSeconds, 1))
        // libpq's rule: after PQconnectStart, first wait until the socket is writable.
        state = .connecting(request: request)
        return .waitForWrite
    }

    private func pollConnect(_ request: Request) -> Progress {
        guard let handle else { return timeOut() }
        switch PQconnectPoll(handle) {
        case PGRES_POLLING_READING:
            return .waitForRead
        case PGRES_POLLING_WRITING:
            return .waitForWrite
        case PGRES_POLLING_OK:
            deadline = nil
            PQsetnonblocking(handle, 1)
            // libpq prints notices to stderr by default; the server log has them anyway.
            PQsetNoticeProcessor(handle, { _, _ in }, nil)
            state = .idle
            if let error = Self.unexpectedSessionSettings(handle) {
                close()
                return fail(error)
            }
            return begin(request, handle)
        default:
            let error = PostgresError(connection: handle, code: .connectionException)
            close()
            return fail(error)
        }
    }

    /// Timestamps are read in UTC and ISO form (see `PostgresTimestamp`), and SQL that
    /// takes a day from a moment counts on UTC: a server (or pooler) reporting other
    /// settings at start-up, as PostgreSQL and pgbouncer both do, is refused rather than
    /// misread. Costs no round trip.
    static func unexpectedSessionSettings(_ handle: OpaquePointer) -> PostgresError? {
        func reported(_ name: String) -> String? { PQparameterStatus(handle, name).map { String(cString: $0) } }
        let timeZone = reported("TimeZone"), dateStyle = reported("DateStyle")
        guard let timeZone, let dateStyle else { return nil }
        if ["UTC", "Etc/UTC"].contains(timeZone), dateStyle.hasPrefix("ISO") { return nil }
        return PostgresError(
            kind: .connection, code: .connectionException,
            message: "the server reports TimeZone \(timeZone) and DateStyle \(dateStyle); the driver needs UTC and ISO (set them on the pooler's database entry, e.g. pgbouncer's timezone=UTC datestyle=ISO)"
        )
    }

    private func close() {
        if let handle { PQfinish(handle) }
        handle = nil
        deadline = nil
        statements.reset()
        state = .idle
    }
}
