/// A connection leased from the pool, valid inside the closure that received it.
/// Its calls run one after another on the pool's event loop.
public struct PostgresSession: Sendable {
    let connection: PostgresConnection
    let loop: PostgresEventLoop

    /// Runs a statement and returns its rows.
    @discardableResult
    public func query(_ query: PostgresQuery) async throws -> PostgresRows {
        try await perform(.query(query))
    }

    /// Runs a statement and returns the number of rows it changed.
    @discardableResult
    public func execute(_ query: PostgresQuery) async throws -> Int {
        try await perform(.query(query)).affectedRows
    }

    /// Runs trusted SQL text that may hold several statements and no parameters, such as
    /// a migration file. Never build this text from input.
    public func runScript(_ sql: String) async throws {
        try await perform(.script(sql))
    }

    /// Streams rows into `COPY ... FROM STDIN` and returns how many were copied. If `body`
    /// throws, the server discards everything sent and the error is rethrown.
    public func copyFrom(
        _ statement: PostgresQuery,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (inout PostgresCopyWriter) async throws -> Void
    ) async throws -> Int {
        precondition(statement.binds.isEmpty, "COPY takes no parameters")
        try await perform(.copyBegin(statement.sql))
        var writer = PostgresCopyWriter(session: self)
        do {
            try await body(&writer)
            try await writer.flush()
        } catch {
            _ = try? await perform(.copyEnd(abortReason: "the client aborted the copy"))
            throw error
        }
        return try await perform(.copyEnd(abortReason: nil)).affectedRows
    }

    @discardableResult
    func perform(_ request: PostgresConnection.Request) async throws -> PostgresRows {
        try await loop.perform(request, on: connection)
    }
}

/// Buffers rows for `COPY FROM STDIN` and sends them in large chunks.
public struct PostgresCopyWriter {
    let session: PostgresSession
    private var buffer: [UInt8] = []
    private static let chunkSize = 256 * 1024

    init(session: PostgresSession) {
        self.session = session
        buffer.reserveCapacity(Self.chunkSize + 4096)
    }

    /// Appends raw COPY data (for example CSV lines, each ending in a newline).
    public mutating func write(_ bytes: some Sequence<UInt8>) async throws {
        buffer.append(contentsOf: bytes)
        if buffer.count >= Self.chunkSize { try await flush() }
    }

    public mutating func write(_ text: String) async throws {
        try await write(text.utf8)
    }

    mutating func flush() async throws {
        guard !buffer.isEmpty else { return }
        let chunk = buffer
        buffer.removeAll(keepingCapacity: true)
        try await session.perform(.copyData(chunk))
    }
}
