import CLibPQ

// Reading libpq results into the driver's own types.

extension PostgresRows {
    /// Copies a libpq result (text format) into rows that outlive it.
    init(copying result: OpaquePointer) {
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
        self.init(columns: columns, affectedRows: Int(tuples) ?? 0, storage: storage, cells: cells)
    }

    static let empty = PostgresRows(columns: [], affectedRows: 0, storage: [], cells: [])
}

extension PostgresError {
    /// The error a failed result reports, with its SQLSTATE and fields.
    init(result: OpaquePointer, handle: OpaquePointer) {
        func field(_ code: Character) -> String? {
            PQresultErrorField(result, Int32(code.asciiValue!)).map { String(cString: $0) }
        }
        let message = field("M") ?? String(cString: PQresultErrorMessage(result))
        guard let sqlstate = field("C") else {
            // No SQLSTATE: libpq itself failed, almost always because the connection broke.
            self.init(kind: .connection, code: .connectionFailure, message: message)
            return
        }
        self.init(
            kind: PQstatus(handle) == CONNECTION_OK ? .server : .connection,
            code: PostgresError.Code(sqlstate),
            message: message,
            detail: field("D"),
            hint: field("H"),
            constraint: field("n"),
            table: field("t"),
            column: field("c")
        )
    }

    /// The connection's own error (libpq's message), for failures without a result.
    init(connection handle: OpaquePointer, code: Code = .connectionFailure) {
        let message = String(cString: PQerrorMessage(handle)).trimmingCharacters(in: .whitespacesAndNewlines)
        self.init(kind: .connection, code: code, message: message)
    }
}
