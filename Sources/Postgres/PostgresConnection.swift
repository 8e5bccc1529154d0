import CLibPQ
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One libpq connection and its prepared statements. Every method blocks, so every
/// call comes through `LibPQThreads`, never from an event loop or Swift's cooperative pool.
///
/// `@unchecked Sendable` is sound because a connection is only ever used by the one
/// lease that holds it (the pool hands it out exclusively and takes it back when the
/// lease ends), and a lease awaits each call before making the next, so no two threads
/// touch the `PGconn` at once; libpq allows a connection to move between threads.
final class PostgresConnection: @unchecked Sendable {
    let configuration: PostgresConfiguration
    private var handle: OpaquePointer?
    private var statementNames: [StatementKey: String] = [:]
    /// Set by the pool on each lease, so the lease's first call checks the connection first.
    var needsCheck = true

    private struct StatementKey: Hashable {
        let sql: String
        let types: [PostgresDataType]
    }

    init(configuration: PostgresConfiguration) {
        self.configuration = configuration
    }

    deinit {
        if let handle { PQfinish(handle) }
    }

    // MARK: Opening and health

    func checkOnFirstUse() throws {
        guard needsCheck else { return }
        needsCheck = false
        try ensureHealthy()
    }

    /// Makes sure the connection is open and idle, reopening it when the server went away
    /// (restart, `pg_terminate_backend`, network loss). Called before each lease's first call.
    func ensureHealthy() throws {
        if let handle, PQstatus(handle) == CONNECTION_OK, PQtransactionStatus(handle) == PQTRANS_IDLE,
            !hasUnexpectedInput(handle)
        {
            return
        }
        close()
        try open()
    }

    /// An idle connection never has anything to read: bytes or end-of-file on its socket
    /// mean the server sent a termination notice or closed it.
    private func hasUnexpectedInput(_ handle: OpaquePointer) -> Bool {
        var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) != 0
    }

    /// True when the connection can go back to the pool for another lease as it is.
    var isReusable: Bool {
        guard let handle else { return false }
        return PQstatus(handle) == CONNECTION_OK && PQtransactionStatus(handle) == PQTRANS_IDLE
    }

    private func open() throws {
        let parameters = configuration.connectionParameters(parsed: try parseConnectionString())
        let keys = parameters.map { strdup($0.0) }
        let values = parameters.map { strdup($0.1) }
        defer {
            keys.forEach { free($0) }
            values.forEach { free($0) }
        }
        let keyPointers = keys.map { UnsafePointer($0) } + [nil]
        let valuePointers = values.map { UnsafePointer($0) } + [nil]
        guard let connection = PQconnectdbParams(keyPointers, valuePointers, 0) else {
            throw PostgresError(kind: .connection, code: .connectionException, message: "libpq could not allocate a connection")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(connection)).trimmingCharacters(in: .whitespacesAndNewlines)
            PQfinish(connection)
            throw PostgresError(kind: .connection, code: .connectionException, message: message)
        }
        // libpq prints notices to stderr by default; the server log has them anyway.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        handle = connection
        statementNames.removeAll()
    }

    private func parseConnectionString() throws -> [(String, String)] {
        let text = configuration.connectionString.trimmingCharacters(in: .whitespaces)
        if text.isEmpty { return [] }
        let isConnInfo = text.contains("=") || text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
        if !isConnInfo { return [("dbname", text)] }
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(text, &error) else {
            let message = error.map { String(cString: $0) } ?? "invalid connection string"
            if let error { PQfreemem(error) }
            throw PostgresError(kind: .connection, message: message.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        defer { PQconninfoFree(options) }
        var parsed: [(String, String)] = []
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val {
                parsed.append((String(cString: keyword), String(cString: value)))
            }
            option += 1
        }
        return parsed
    }

    func close() {
        if let handle { PQfinish(handle) }
        handle = nil
        statementNames.removeAll()
    }

    private func openHandle() throws -> OpaquePointer {
        guard let handle else {
            throw PostgresError(kind: .connection, code: .connectionFailure, message: "connection is closed")
        }
        return handle
    }

    // MARK: Statements

    func query(_ query: PostgresQuery) throws -> PostgresRows {
        let handle = try openHandle()
        let types = query.binds.map(\.dataType)
        let values = try ParameterBuffer(query.binds)
        let result: OpaquePointer?
        if let name = try statementName(for: query.sql, types: types, handle: handle) {
            result = values.withPointers { values, lengths, formats in
                PQexecPrepared(handle, name, Int32(query.binds.count), values, lengths, formats, 0)
            }
        } else {
            let oids = types.map { Oid($0.rawValue) }
            result = values.withPointers { values, lengths, formats in
                PQexecParams(handle, query.sql, Int32(query.binds.count), oids, values, lengths, formats, 0)
            }
        }
        return try consume(result, handle: handle)
    }

    /// The prepared statement for this SQL, preparing it on first use; nil once the cache is full.
    private func statementName(for sql: String, types: [PostgresDataType], handle: OpaquePointer) throws -> String? {
        let key = StatementKey(sql: sql, types: types)
        if let name = statementNames[key] { return name }
        guard statementNames.count < configuration.statementCacheCapacity else { return nil }
        let name = "s\(statementNames.count + 1)"
        let oids = types.map { Oid($0.rawValue) }
        _ = try consume(PQprepare(handle, name, sql, Int32(types.count), oids), handle: handle)
        statementNames[key] = name
        return name
    }

    /// Runs SQL text that may hold several statements and no parameters (migrations, setup).
    func runScript(_ sql: String) throws {
        let handle = try openHandle()
        _ = try consume(PQexec(handle, sql), handle: handle)
    }

    // MARK: COPY FROM STDIN

    func beginCopy(_ sql: String) throws {
        let handle = try openHandle()
        guard let result = PQexec(handle, sql) else { throw connectionError(handle) }
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COPY_IN else {
            throw serverError(result, handle: handle)
        }
    }

    func sendCopyData(_ bytes: [UInt8]) throws {
        let handle = try openHandle()
        let sent = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                PQputCopyData(handle, $0, Int32(buffer.count))
            }
        }
        guard sent == 1 else { throw connectionError(handle) }
    }

    /// Ends the COPY: commits the data, or with `abortReason` makes the server reject it.
    /// Returns the number of rows copied.
    func endCopy(abortReason: String?) throws -> Int {
        let handle = try openHandle()
        guard PQputCopyEnd(handle, abortReason) == 1 else { throw connectionError(handle) }
        var outcome: Result<Int, PostgresError>?
        while let result = PQgetResult(handle) {
            if outcome == nil {
                outcome = Result { try consume(result, handle: handle).affectedRows }
                    .mapError { $0 as! PostgresError }
            } else {
                PQclear(result)
            }
        }
        guard let outcome else { throw connectionError(handle) }
        return try outcome.get()
    }

    // MARK: Results

    /// Turns a libpq result into rows or an error, and frees it.
    private func consume(_ result: OpaquePointer?, handle: OpaquePointer) throws -> PostgresRows {
        guard let result else { throw connectionError(handle) }
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY, PGRES_SINGLE_TUPLE:
            return rows(from: result)
        default:
            throw serverError(result, handle: handle)
        }
    }

    private func rows(from result: OpaquePointer) -> PostgresRows {
        let columnCount = Int(PQnfields(result))
        let rowCount = Int(PQntuples(result))
        let columns = (0..<columnCount).map { column in
            PostgresRows.Column(
                name: String(cString: PQfname(result, Int32(column))),
                dataType: PostgresDataType(UInt32(PQftype(result, Int32(column))))
            )
        }
        var cells: [(offset: Int, length: Int)] = []
        cells.reserveCapacity(rowCount * columnCount)
        var total = 0
        for row in 0..<Int32(rowCount) {
            for column in 0..<Int32(columnCount) {
                total += Int(PQgetlength(result, row, column))
            }
        }
        var storage: [UInt8] = []
        storage.reserveCapacity(total)
        for row in 0..<Int32(rowCount) {
            for column in 0..<Int32(columnCount) {
                if PQgetisnull(result, row, column) == 1 {
                    cells.append((offset: 0, length: -1))
                    continue
                }
                let length = Int(PQgetlength(result, row, column))
                cells.append((offset: storage.count, length: length))
                if let value = PQgetvalue(result, row, column) {
                    value.withMemoryRebound(to: UInt8.self, capacity: length) {
                        storage.append(contentsOf: UnsafeBufferPointer(start: $0, count: length))
                    }
                }
            }
        }
        let tuples = PQcmdTuples(result).map { String(cString: $0) } ?? ""
        return PostgresRows(columns: columns, affectedRows: Int(tuples) ?? 0, storage: storage, cells: cells)
    }

    private func serverError(_ result: OpaquePointer, handle: OpaquePointer) -> PostgresError {
        func field(_ code: Character) -> String? {
            PQresultErrorField(result, Int32(code.asciiValue!)).map { String(cString: $0) }
        }
        let message = field("M") ?? String(cString: PQresultErrorMessage(result))
        guard let sqlstate = field("C") else {
            // No SQLSTATE: libpq itself failed, almost always because the connection broke.
            return PostgresError(kind: .connection, code: .connectionFailure, message: message)
        }
        let code = PostgresError.Code(sqlstate)
        let lostConnection = PQstatus(handle) != CONNECTION_OK
        return PostgresError(
            kind: lostConnection ? .connection : .server,
            code: code,
            message: message,
            detail: field("D"),
            hint: field("H"),
            constraint: field("n"),
            table: field("t"),
            column: field("c")
        )
    }

    private func connectionError(_ handle: OpaquePointer) -> PostgresError {
        let message = String(cString: PQerrorMessage(handle)).trimmingCharacters(in: .whitespacesAndNewlines)
        return PostgresError(kind: .connection, code: .connectionFailure, message: message)
    }
}

/// Parameter values laid out as the C arrays libpq takes.
private struct ParameterBuffer {
    /// Starts with one byte so the buffer always has an address, even for empty values.
    private var storage: [UInt8] = [0]
    /// Offset of each value in `storage`, or -1 for NULL.
    private var offsets: [Int] = []
    private var lengths: [Int32] = []
    private var formats: [Int32] = []

    init(_ binds: [PostgresBind]) throws {
        for bind in binds {
            switch bind.value {
            case .null:
                offsets.append(-1)
                lengths.append(0)
                formats.append(0)
            case .text(let text):
                // Text parameters travel as C strings, so a NUL would silently cut the value.
                guard !text.utf8.contains(0) else {
                    throw PostgresError(
                        kind: .encoding, code: .characterNotInRepertoire,
                        message: "a text parameter contains a NUL byte"
                    )
                }
                offsets.append(storage.count)
                storage.append(contentsOf: text.utf8)
                storage.append(0)
                lengths.append(Int32(text.utf8.count))
                formats.append(0)
            case .binary(let bytes):
                offsets.append(storage.count)
                storage.append(contentsOf: bytes)
                lengths.append(Int32(bytes.count))
                formats.append(1)
            }
        }
    }

    func withPointers<T>(
        _ body: ([UnsafePointer<CChar>?], [Int32], [Int32]) -> T
    ) -> T {
        storage.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!)
            let pointers: [UnsafePointer<CChar>?] = offsets.map { offset in
                offset < 0 ? nil : (base + offset).assumingMemoryBound(to: CChar.self)
            }
            return body(pointers, lengths, formats)
        }
    }
}
