/// Input that breaks a rule, told in a sentence for people: `422 validation_failed`.
/// For an uploaded file, `line` is the line an editor shows the problem on; it reaches
/// clients as the problem's `line` field.
public struct InvalidInput: Error, Equatable, Sendable, CustomStringConvertible {
    public let detail: String
    public let line: Int?

    init(_ detail: String) {
        self.detail = detail
        self.line = nil
    }

    init(line: Int, _ detail: String) {
        self.detail = "Line \(line): \(detail)"
        self.line = line
    }

    public var description: String { detail }
}

/// A feature's error about one line of an uploaded file (an imported trade the portfolio
/// refused): answered as that error would be, with the line.
public struct ErrorAtLine: Error, Sendable {
    public let line: Int
    public let error: any Error
}
