/// The one CSV reader (RFC 4180): fed a file in chunks of any size, it hands out each
/// record with the line it starts on, so errors name the line an editor shows even after
/// a quoted field that spans lines. Quoted fields may hold commas, line breaks and `""`
/// for a quote; a quote inside an unquoted field is kept as it is; carriage returns
/// outside quotes are dropped, so CRLF and LF files read alike. Used for instrument lists
/// and for price files of any size (runs of plain bytes are copied at once, and the
/// record's storage is reused from one record to the next).
///
/// Written here rather than taken from a CSV library: the libraries at hand parse whole
/// strings or streams of `String`s and do not report the line a record starts on.
struct CSVReader {
    /// One record: its fields as bytes, and the line it starts on (the first line is 1).
    struct Record {
        let line: Int
        fileprivate let bytes: [UInt8]
        fileprivate let ranges: [Range<Int>]

        var count: Int { ranges.count }

        subscript(index: Int) -> ArraySlice<UInt8> { bytes[ranges[index]] }

        func string(_ index: Int) -> String { String(decoding: self[index], as: UTF8.self) }

        var strings: [String] { ranges.indices.map(string) }

        /// An empty line: a record of one empty field.
        var isBlank: Bool { ranges.count == 1 && ranges[0].isEmpty }
    }

    private enum State {
        case fieldStart, unquoted, quoted, quoteInQuoted
    }

    private var bytes: [UInt8] = []
    private var ranges: [Range<Int>] = []
    private var fieldStart = 0
    private var state = State.fieldStart
    private var line = 1
    private var recordLine = 1

    private static let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ","), newline = UInt8(ascii: "\n"),
        carriageReturn = UInt8(ascii: "\r")

    /// Reads a chunk, calling `body` for each record it completes.
    mutating func consume(_ chunk: UnsafeRawBufferPointer, _ body: (Record) throws -> Void) rethrows {
        var index = chunk.startIndex
        let end = chunk.endIndex
        while index < end {
            let byte = chunk[index]
            switch state {
            case .quoted:
                if byte == Self.quote {
                    state = .quoteInQuoted
                } else {
                    if byte == Self.newline { line += 1 }
                    bytes.append(byte)
                }
            case .quoteInQuoted:
                state = .unquoted
                if byte == Self.quote {
                    bytes.append(byte)
                    state = .quoted
                } else {
                    continue  // the quoted part ended: read this byte as unquoted
                }
            case .fieldStart, .unquoted:
                switch byte {
                case Self.quote where state == .fieldStart:
                    state = .quoted
                case Self.comma:
                    endField()
                case Self.newline:
                    line += 1
                    endField()
                    try emit(body)
                    recordLine = line
                case Self.carriageReturn:
                    break
                default:
                    // A run of plain bytes is copied at once.
                    var runEnd = index + 1
                    while runEnd < end, !Self.isSpecial(chunk[runEnd]) { runEnd += 1 }
                    bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[index..<runEnd]))
                    state = .unquoted
                    index = runEnd
                    continue
                }
            }
            index += 1
        }
    }

    /// Reads the last record when the file does not end with a line break.
    mutating func finish(_ body: (Record) throws -> Void) rethrows {
        guard state != .fieldStart || !ranges.isEmpty || !bytes.isEmpty else { return }
        endField()
        try emit(body)
    }

    /// Every record of a file held in memory.
    static func records(in text: String) -> [Record] {
        var reader = CSVReader()
        var records: [Record] = []
        Array(text.utf8).withUnsafeBytes { reader.consume($0) { records.append($0) } }
        reader.finish { records.append($0) }
        return records
    }

    private static func isSpecial(_ byte: UInt8) -> Bool {
        byte == comma || byte == newline || byte == quote || byte == carriageReturn
    }

    private mutating func endField() {
        ranges.append(fieldStart..<bytes.count)
        fieldStart = bytes.count
        state = .fieldStart
    }

    private mutating func emit(_ body: (Record) throws -> Void) rethrows {
        defer {
            ranges.removeAll(keepingCapacity: true)
            bytes.removeAll(keepingCapacity: true)
            fieldStart = 0
        }
        try body(Record(line: recordLine, bytes: bytes, ranges: ranges))
    }
}
