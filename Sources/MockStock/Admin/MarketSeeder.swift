import Foundation
import NIOCore
import NIOPosix
import Postgres

/// Seeds the market from files: what `mockstock seed` and `make run` use.
public struct MarketSeeder: Sendable {
    let admin: MarketAdminStore
    let prices: PriceImporter
    let fx: FxStore

    public init(pool: PostgresConnectionPool) {
        admin = MarketAdminStore(pool: pool)
        prices = PriceImporter(pool: pool)
        fx = FxStore(pool: pool)
    }

    /// Whether no instrument exists yet.
    public func isEmpty() async throws -> Bool {
        try await admin.isEmpty()
    }

    /// Upserts instruments from CSV; see `Instrument.fromCSV`.
    public func seedInstruments(csv: String) async throws -> Int {
        try await admin.upsert(try Instrument.fromCSV(csv))
    }

    /// Loads the ECB's daily exchange rates (`FxStore.parse`; a few MB at most, read whole);
    /// how many rates.
    public func seedFX<Chunks: AsyncSequence>(_ chunks: Chunks) async throws -> Int where Chunks.Element == ByteBuffer {
        var text = ByteBuffer()
        for try await var chunk in chunks { text.writeBuffer(&chunk) }
        return try await fx.store(try FxStore.parse(String(buffer: text)))
    }

    /// Whether no exchange rate is stored yet.
    public func hasNoFX() async throws -> Bool {
        try await fx.isEmpty()
    }

    /// Loads daily bars; see `PriceImporter`. `endingBefore` moves their days onto the
    /// trading days before that day.
    public func seedPrices<Chunks: AsyncSequence>(
        _ chunks: Chunks, endingBefore: String? = nil
    ) async throws -> Int where Chunks.Element == ByteBuffer {
        try await prices.load(chunks, endingBefore: endingBefore)
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
