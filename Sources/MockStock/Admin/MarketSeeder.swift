import Foundation
import NIOCore
import NIOPosix
import Postgres

/// Seeds the market from files: what `mockstock seed` and `make run` use.
public struct MarketSeeder: Sendable {
    let admin: MarketAdminStore
    let prices: PriceImporter

    public init(pool: PostgresConnectionPool) {
        admin = MarketAdminStore(pool: pool)
        prices = PriceImporter(pool: pool)
    }

    /// Whether no instrument exists yet.
    public func isEmpty() async throws -> Bool {
        try await admin.pool.query("SELECT NOT EXISTS (SELECT 1 FROM instruments)").decodeColumn(Bool.self) == [true]
    }

    /// Upserts instruments from CSV with a header naming `symbol` and `name` (or the
    /// S&P list's `Security`), and optionally `sector` (or `GICS Sector`), `description`
    /// and `currency`. Without a description, one is made of the sub-industry,
    /// headquarters and founding year when the file has them.
    public func seedInstruments(csv: String) async throws -> Int {
        let records = CSV.parse(csv).filter { $0.fields != [""] }
        guard let header = records.first?.fields.map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) else { return 0 }
        func column(_ names: String...) -> Int? { names.lazy.compactMap { header.firstIndex(of: $0) }.first }
        guard let symbolColumn = column("symbol"), let nameColumn = column("name", "security") else {
            throw InvalidInput(line: records[0].line, "the header needs symbol and name (or Security) columns.")
        }
        let sector = column("sector", "gics sector")
        let description = column("description")
        let currency = column("currency")
        let subIndustry = column("gics sub-industry")
        let headquarters = column("headquarters location")
        let founded = column("founded")
        var instruments: [Instrument] = []
        var lines: [String: Int] = [:]
        for record in records.dropFirst() {
            guard record.fields.count == header.count else {
                throw InvalidInput(line: record.line, "expected \(header.count) fields, found \(record.fields.count).")
            }
            func value(_ column: Int?) -> String? {
                column.map { record.fields[$0].trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
            }
            let composed = [
                value(subIndustry).map { "\($0)." },
                value(headquarters).map { "Headquartered in \($0)." },
                value(founded).map { "Founded \($0)." },
            ].compactMap { $0 }.joined(separator: " ")
            let input = AdminController.InstrumentInput(
                symbol: record.fields[symbolColumn], name: record.fields[nameColumn],
                description: value(description) ?? (composed.isEmpty ? nil : composed),
                sector: value(sector), currency: value(currency)
            )
            let instrument: Instrument
            do {
                instrument = try Instrument(input, fieldPrefix: "")
            } catch let error as InvalidInput {
                throw InvalidInput(line: record.line, error.detail)
            }
            if let first = lines.updateValue(record.line, forKey: instrument.symbol) {
                throw InvalidInput(line: record.line, "\(instrument.symbol) already appears on line \(first).")
            }
            instruments.append(instrument)
        }
        return try await admin.upsert(instruments)
    }

    /// Loads daily bars; see `PriceImporter`.
    public func seedPrices<Chunks: AsyncSequence>(_ chunks: Chunks) async throws -> Int where Chunks.Element == ByteBuffer {
        try await prices.load(chunks)
    }
}

/// A file's bytes in chunks, read on NIO's blocking thread pool as they are asked for,
/// so a large file streams with little memory. Files ending `.gz` are decompressed by
/// `gzip -dc`.
public struct FileChunks: AsyncSequence, Sendable {
    public typealias Element = ByteBuffer
    let descriptor: Int32
    let decompressor: Process?

    public init(path: String) throws {
        if path.hasSuffix(".gz") {
            guard FileManager.default.isReadableFile(atPath: path) else { throw CocoaError(.fileReadNoSuchFile) }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["gzip", "-dc", path]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            descriptor = pipe.fileHandleForReading.fileDescriptor
            decompressor = process
        } else {
            descriptor = open(path, O_RDONLY)
            guard descriptor >= 0 else { throw CocoaError(.fileReadNoSuchFile) }
            decompressor = nil
        }
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(descriptor: descriptor, decompressor: decompressor)
    }

    public struct Iterator: AsyncIteratorProtocol {
        let descriptor: Int32
        let decompressor: Process?

        public mutating func next() async throws -> ByteBuffer? {
            let descriptor = self.descriptor
            let chunk = try await NIOThreadPool.singleton.runIfActive { () throws -> [UInt8] in
                var buffer = [UInt8](repeating: 0, count: 1 << 20)
                let count = read(descriptor, &buffer, buffer.count)
                guard count >= 0 else { throw CocoaError(.fileReadUnknown) }
                return Array(buffer.prefix(count))
            }
            if !chunk.isEmpty { return ByteBuffer(bytes: chunk) }
            if let decompressor {
                decompressor.waitUntilExit()
                guard decompressor.terminationStatus == 0 else {
                    throw InvalidInput("the file is not valid gzip.")
                }
            }
            return nil
        }
    }
}

/// A small RFC 4180 reader for files that fit in memory (instrument lists). Each record
/// carries the line it starts on, so errors name the line an editor shows even after a
/// quoted field that spans lines.
enum CSV {
    struct Record: Equatable {
        let line: Int
        let fields: [String]
    }

    static func parse(_ text: String) -> [Record] {
        var records: [Record] = []
        var fields: [String] = []
        var field = ""
        var quoted = false
        var pendingQuote = false
        var line = 1
        var recordLine = 1
        for scalar in text.unicodeScalars {
            if scalar == "\n" { line += 1 }
            if quoted {
                if pendingQuote {
                    pendingQuote = false
                    if scalar == "\"" { field.unicodeScalars.append(scalar); continue }
                    quoted = false
                } else if scalar == "\"" {
                    pendingQuote = true
                    continue
                } else {
                    field.unicodeScalars.append(scalar)
                    continue
                }
            }
            switch scalar {
            case "\"" where field.isEmpty: quoted = true
            case ",":
                fields.append(field)
                field = ""
            case "\n":
                fields.append(field)
                records.append(Record(line: recordLine, fields: fields))
                fields = []
                field = ""
                recordLine = line
            case "\r": continue
            default: field.unicodeScalars.append(scalar)
            }
        }
        if !field.isEmpty || !fields.isEmpty {
            fields.append(field)
            records.append(Record(line: recordLine, fields: fields))
        }
        return records
    }
}
