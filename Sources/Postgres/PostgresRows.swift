/// The rows a statement returned, copied out of libpq into one buffer.
public struct PostgresRows: Sendable, RandomAccessCollection {
    public struct Column: Sendable, Hashable {
        public let name: String
        public let dataType: PostgresDataType
    }

    public let columns: [Column]
    /// Each column's position by name (the first, where a name repeats).
    let positions: [String: Int]
    /// Rows inserted, updated, deleted or copied, as the command tag reports.
    public let affectedRows: Int
    let storage: [UInt8]
    /// Per cell, row-major: start offset in `storage` and length, or -1 for NULL.
    let cells: [(offset: Int, length: Int)]

    init(columns: [Column], affectedRows: Int, storage: [UInt8], cells: [(offset: Int, length: Int)]) {
        self.columns = columns
        self.positions = Dictionary(columns.enumerated().map { ($1.name, $0) }) { first, _ in first }
        self.affectedRows = affectedRows
        self.storage = storage
        self.cells = cells
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { columns.isEmpty ? 0 : cells.count / columns.count }

    public subscript(position: Int) -> PostgresRow {
        PostgresRow(rows: self, index: position)
    }

    /// Decodes every row into a tuple of the given types, column by column.
    public func decode<each T: PostgresDecodable>(_ types: (repeat each T).Type) throws -> [(repeat each T)] {
        try map { try $0.decode(types) }
    }

    /// Decodes the first column of every row.
    public func decodeColumn<T: PostgresDecodable>(_ type: T.Type) throws -> [T] {
        try map { try $0.decode(type, column: 0) }
    }
}

/// One row of a result.
public struct PostgresRow: Sendable {
    let rows: PostgresRows
    let index: Int

    public var columnCount: Int { rows.columns.count }

    public func cell(_ column: Int) -> PostgresCell {
        precondition(column >= 0 && column < rows.columns.count, "column \(column) out of range")
        let (offset, length) = rows.cells[index * rows.columns.count + column]
        let info = rows.columns[column]
        let bytes = length < 0 ? nil : rows.storage[offset..<offset + length]
        return PostgresCell(bytes: bytes, dataType: info.dataType, columnName: info.name)
    }

    public func decode<T: PostgresDecodable>(_ type: T.Type, column: Int) throws -> T {
        try T.decode(from: cell(column))
    }

    public func decode<T: PostgresDecodable>(_ type: T.Type, column name: String) throws -> T {
        guard let column = rows.positions[name] else {
            throw PostgresError.decoding(column: name, "no such column in the result")
        }
        return try decode(type, column: column)
    }

    /// Decodes the row's columns, in order, into a tuple: `row.decode((Int, String).self)`.
    public func decode<each T: PostgresDecodable>(_ types: (repeat each T).Type) throws -> (repeat each T) {
        var count = 0
        for _ in repeat (each T).self { count += 1 }
        guard count == rows.columns.count else {
            throw PostgresError(
                kind: .decoding,
                message: "the result has \(rows.columns.count) columns, decoding asked for \(count)"
            )
        }
        var column = 0
        func next<V: PostgresDecodable>(_ type: V.Type) throws -> V {
            defer { column += 1 }
            return try decode(type, column: column)
        }
        return (repeat try next((each T).self))
    }
}

extension PostgresRows {
    /// A notification from `NOTIFY`, as libpq reports it.
    struct Notification {
        let channel: String
        let payload: String
        let processID: Int32
    }

    /// Notifications as rows of `(channel text, payload text, process_id int4)`, the shape
    /// a wait for notifications answers in.
    init(notifications: [Notification]) {
        var storage: [UInt8] = []
        var cells: [(offset: Int, length: Int)] = []
        for notification in notifications {
            for text in [notification.channel, notification.payload, String(notification.processID)] {
                cells.append((offset: storage.count, length: text.utf8.count))
                storage.append(contentsOf: text.utf8)
            }
        }
        self.init(
            columns: [
                Column(name: "channel", dataType: .text),
                Column(name: "payload", dataType: .text),
                Column(name: "process_id", dataType: .int4),
            ],
            affectedRows: 0, storage: storage, cells: cells
        )
    }
}
