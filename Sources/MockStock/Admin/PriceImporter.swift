import Foundation
import NIOCore
import Postgres

/// Loads daily bars from CSV (`symbol,date,open,high,low,close,volume` and optionally
/// `dividend,split`; other columns are ignored; CRLF or LF), streaming: each chunk is
/// checked and passed on to `COPY` as it arrives, so an upload of any size needs little
/// memory. One transaction: a bad row anywhere stores nothing and is reported by its line
/// number. Rows already stored for the same symbol and day are replaced, so loading the
/// same file twice changes nothing.
struct PriceImporter: Sendable {
    let pool: PostgresConnectionPool

    /// Loads the chunks and returns the number of rows stored. With `endingBefore` (a day,
    /// `YYYY-MM-DD`), the file's trading days are moved, in order, onto the NYSE trading
    /// days that end on the last one before it (`MarketHours.tradingDays`): real prices on
    /// recent dates, each day's splits and dividends with it.
    func load<Chunks: AsyncSequence>(
        _ chunks: Chunks, endingBefore: String? = nil, audit: AuditEntry? = nil
    ) async throws -> Int where Chunks.Element == ByteBuffer {
        try await pool.withTransaction { session in
            try await session.runScript(
                """
                CREATE TEMP TABLE price_upload (
                    line bigint, symbol text, day date, open numeric, high numeric, low numeric,
                    close numeric, volume bigint, dividend numeric, split numeric
                ) ON COMMIT DROP
                """
            )
            var parser = PriceCSVParser()
            _ = try await session.copyFrom("COPY price_upload FROM STDIN") { writer in
                for try await chunk in chunks {
                    let rows = try chunk.withUnsafeReadableBytes { try parser.consume($0) }
                    try await writer.write(rows)
                }
                try await writer.write(try parser.finish())
            }
            guard parser.rows > 0 else {
                throw InvalidInput("The upload holds no price rows.")
            }
            if let endingBefore { try await moveDays(session, endingBefore: endingBefore) }
            let stored = try await store(session)
            try await session.execute(CorporateActionStore.recordFromUpload)
            if var audit {
                audit.details["rows"] = .number(stored)
                try await AuditStore.record(audit, in: session)
            }
            return stored
        }
    }

    /// Moves the upload's days onto the trading days before `day`, keeping their order.
    private func moveDays(_ session: PostgresSession, endingBefore day: String) async throws {
        let days = try await session.query("SELECT DISTINCT to_char(day, 'YYYY-MM-DD') FROM price_upload ORDER BY 1")
            .decodeColumn(String.self)
        let target = MarketHours(schedule: .nyse).tradingDays(count: days.count, before: day)
        guard target.count == days.count else { throw InvalidInput("No trading days to move the prices onto before \(day).") }
        try await session.execute(
            """
            UPDATE price_upload u SET day = m.moved
            FROM unnest(\(days)::date[], \(target)::date[]) m (day, moved) WHERE u.day = m.day
            """
        )
    }

    /// Moves the checked rows into `daily_bars`. A first load is a plain insert; only when
    /// some rows exist already does it run again as an upsert. Unknown symbols and repeated
    /// rows are found by the constraints, and only then looked up to name their line.
    private func store(_ session: PostgresSession) async throws -> Int {
        let columns = "symbol, day, open, high, low, close, volume, dividend, split"
        try await session.runScript("SAVEPOINT before_insert")
        do {
            return try await session.execute(
                "INSERT INTO daily_bars (\(unescaped: columns)) SELECT \(unescaped: columns) FROM price_upload"
            )
        } catch let error as PostgresError where error.code == .uniqueViolation {
            try await session.runScript("ROLLBACK TO SAVEPOINT before_insert")
        } catch let error as PostgresError where error.code == .foreignKeyViolation {
            try await session.runScript("ROLLBACK TO SAVEPOINT before_insert")
            throw InvalidInput(line: try await firstLine(session, "NOT EXISTS (SELECT 1 FROM instruments i WHERE i.symbol = u.symbol)"),
                                            "unknown symbol; add the instrument first.")
        }
        do {
            return try await session.execute(
                """
                INSERT INTO daily_bars (\(unescaped: columns)) SELECT \(unescaped: columns) FROM price_upload
                ON CONFLICT (symbol, day) DO UPDATE SET
                    open = excluded.open, high = excluded.high, low = excluded.low, close = excluded.close,
                    volume = excluded.volume, dividend = excluded.dividend, split = excluded.split
                """
            )
        } catch let error as PostgresError where error.code == .cardinalityViolation {
            try await session.runScript("ROLLBACK TO SAVEPOINT before_insert")
            throw InvalidInput(
                line: try await firstLine(session, "EXISTS (SELECT 1 FROM price_upload o WHERE o.symbol = u.symbol AND o.day = u.day AND o.line < u.line)"),
                "the same symbol and date appear twice in the upload."
            )
        }
    }

    /// The first line of the upload meeting `condition` (a condition on `u`).
    private func firstLine(_ session: PostgresSession, _ condition: PostgresQuery) async throws -> Int {
        try await session.query("SELECT min(line) FROM price_upload u WHERE \(condition)")
            .decodeColumn(Int?.self).first.flatMap { $0 } ?? 0
    }
}

/// Turns CSV bytes into rows of `COPY ... FROM STDIN` text format, checking every value
/// of each record `CSVReader` reads (the header is line 1).
struct PriceCSVParser {
    private enum Column: String, CaseIterable {
        case symbol, date, open, high, low, close, volume, dividend, split
    }

    /// Where each column is in a row, read from the header.
    private struct Layout {
        let symbol: Int, date: Int, close: Int
        let open: Int?, high: Int?, low: Int?, volume: Int?, dividend: Int?, split: Int?
    }

    private var reader = CSVReader()
    private var layout: Layout?
    private var fieldCount = 0
    /// The line of the record being checked, for error messages.
    private var line = 0
    private(set) var rows = 0

    /// Consumes a chunk and returns the COPY rows for the records completed in it.
    mutating func consume(_ bytes: UnsafeRawBufferPointer) throws -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + bytes.count / 4)
        var reader = self.reader
        defer { self.reader = reader }
        try reader.consume(bytes) { try process($0, into: &output) }
        return output
    }

    /// Handles a last record without a line break.
    mutating func finish() throws -> [UInt8] {
        var output: [UInt8] = []
        var reader = self.reader
        defer { self.reader = reader }
        try reader.finish { try process($0, into: &output) }
        if layout == nil { throw InvalidInput("The upload is empty: a header row and price rows are needed.") }
        return output
    }

    private mutating func process(_ fields: CSVReader.Record, into output: inout [UInt8]) throws {
        line = fields.line
        if fields.isBlank { return }
        guard let layout else {
            try readHeader(fields)
            return
        }
        guard fields.count == fieldCount else {
            throw InvalidInput(line: line, "expected \(fieldCount) fields, found \(fields.count).")
        }
        func field(_ index: Int?) -> ArraySlice<UInt8>? {
            index.map { fields[$0] }
        }

        appendNumber(line, to: &output)
        output.append(UInt8(ascii: "\t"))
        let symbol = fields[layout.symbol]
        guard (1...12).contains(symbol.count), symbol.allSatisfy(Self.isSymbolByte) else {
            throw InvalidInput(line: line, "symbol must be 1–12 letters, digits, '.' or '-'.")
        }
        output.append(contentsOf: symbol.map { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) ? $0 - 32 : $0 })
        output.append(UInt8(ascii: "\t"))
        let date = fields[layout.date]
        guard CalendarDay.isValid(date) else {
            throw InvalidInput(line: line, "date must be a real day written YYYY-MM-DD.")
        }
        output.append(contentsOf: date)
        for (index, name) in [(layout.open, "open"), (layout.high, "high"), (layout.low, "low"), (layout.close, "close")] {
            output.append(UInt8(ascii: "\t"))
            try appendPrice(field(index), name: name, required: name == "close", to: &output)
        }
        output.append(UInt8(ascii: "\t"))
        if let volume = field(layout.volume), !volume.isEmpty {
            let digits = volume.prefix { $0 != UInt8(ascii: ".") }
            let fraction = volume.dropFirst(digits.count)
            guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy(Self.isDigit),
                fraction.isEmpty || fraction.dropFirst().allSatisfy({ $0 == UInt8(ascii: "0") })
            else {
                throw InvalidInput(line: line, "volume must be a whole number of shares.")
            }
            output.append(contentsOf: digits)
        } else {
            output.append(UInt8(ascii: "0"))
        }
        output.append(UInt8(ascii: "\t"))
        try appendAmount(field(layout.dividend), name: "dividend", default: "0", allowZero: true, to: &output)
        output.append(UInt8(ascii: "\t"))
        try appendAmount(field(layout.split), name: "split", default: "1", allowZero: false, to: &output)
        output.append(UInt8(ascii: "\n"))
        rows += 1
    }

    private mutating func readHeader(_ fields: CSVReader.Record) throws {
        var positions: [Column: Int] = [:]
        for (index, field) in fields.strings.enumerated() {
            let name = field.trimmingCharacters(in: .whitespaces).lowercased()
            if let column = Column(rawValue: name) { positions[column] = index }
        }
        guard let symbol = positions[.symbol], let date = positions[.date], let close = positions[.close] else {
            let missing = [Column.symbol, .date, .close].filter { positions[$0] == nil }.map(\.rawValue)
            throw InvalidInput(
                line: line, "the header lacks \(missing.joined(separator: ", ")); expected symbol,date,open,high,low,close,volume."
            )
        }
        layout = Layout(
            symbol: symbol, date: date, close: close, open: positions[.open], high: positions[.high],
            low: positions[.low], volume: positions[.volume], dividend: positions[.dividend], split: positions[.split]
        )
        fieldCount = fields.count
    }

    private func appendPrice(_ field: ArraySlice<UInt8>?, name: String, required: Bool, to output: inout [UInt8]) throws {
        guard let field, !field.isEmpty else {
            if required { throw InvalidInput(line: line, "\(name) is required.") }
            output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "N")])
            return
        }
        guard Self.isDecimal(field) else { throw InvalidInput(line: line, "\(name) is not a number.") }
        guard Self.isPositive(field) else { throw InvalidInput(line: line, "\(name) must be greater than zero.") }
        output.append(contentsOf: field)
    }

    private func appendAmount(
        _ field: ArraySlice<UInt8>?, name: String, default fallback: String, allowZero: Bool,
        to output: inout [UInt8]
    ) throws {
        guard let field, !field.isEmpty else {
            output.append(contentsOf: fallback.utf8)
            return
        }
        guard Self.isDecimal(field), field.first != UInt8(ascii: "-"), allowZero || Self.isPositive(field) else {
            throw InvalidInput(line: line, "\(name) must be a \(allowZero ? "non-negative" : "positive") number.")
        }
        output.append(contentsOf: field)
    }

    private func appendNumber(_ value: Int, to output: inout [UInt8]) {
        output.append(contentsOf: String(value).utf8)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private static func isSymbolByte(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
    }

    /// `-?digits(.digits)?`, at most 30 digits.
    private static func isDecimal(_ field: ArraySlice<UInt8>) -> Bool {
        var body = field[...]
        if body.first == UInt8(ascii: "-") { body = body.dropFirst() }
        guard let dot = body.firstIndex(of: UInt8(ascii: ".")) else {
            return !body.isEmpty && body.count <= 30 && body.allSatisfy(isDigit)
        }
        let whole = body[..<dot]
        let fraction = body[(dot + 1)...]
        return !whole.isEmpty && !fraction.isEmpty && whole.count + fraction.count <= 30
            && whole.allSatisfy(isDigit) && fraction.allSatisfy(isDigit)
    }

    private static func isPositive(_ field: ArraySlice<UInt8>) -> Bool {
        field.first != UInt8(ascii: "-") && field.contains { $0 != UInt8(ascii: "0") && $0 != UInt8(ascii: ".") }
    }

    /// YYYY-MM-DD naming a day that exists.
}
