/// The one rule for text a client sends. Lengths are counted in Unicode scalars, as
/// PostgreSQL's `length()` and the schema's checks count them (Swift's `count` counts
/// grapheme clusters, so a letter with 100 combining marks would be "1 character" here
/// and 101 there). Text shown to other people may hold no control characters and no
/// bidirectional-formatting characters, which could make a name read differently from
/// what it is (U+202E turns the rest of a line around).
enum TextInput {
    /// How the text is used, which decides what it may contain.
    enum Use {
        /// Shown to other people on one line: names, titles.
        case shownOnOneLine
        /// Shown to other people, with line breaks and tabs: descriptions, message bodies.
        case shownWithLines
        /// Never shown to anyone else (an email address, a search, a key): only its length counts.
        case privateToSender
    }

    /// Throws `InvalidInput` naming `field` when `text` is not within `length` scalars or
    /// holds characters its `use` forbids.
    static func check(_ text: String, field: String, length: ClosedRange<Int>, use: Use = .shownOnOneLine) throws {
        let scalars = text.unicodeScalars
        var count = 0
        for scalar in scalars {
            count += 1
            if use != .privateToSender && isForbidden(scalar, lines: use == .shownWithLines) {
                throw InvalidInput("\(field) may not contain control characters or bidirectional-text controls.")
            }
        }
        guard length.contains(count) else {
            let bound = length.lowerBound == 0 ? "at most \(length.upperBound)" : "\(length.lowerBound)–\(length.upperBound)"
            throw InvalidInput("\(field) must be \(bound) characters.")
        }
    }

    static func isForbidden(_ scalar: Unicode.Scalar, lines: Bool) -> Bool {
        switch scalar.value {
        case 0x09, 0x0A, 0x0D: return !lines
        case 0x00...0x1F, 0x7F...0x9F: return true  // C0 and C1 controls, DEL
        case 0x061C, 0x200E, 0x200F: return true  // Arabic letter mark, left-to-right and right-to-left marks
        case 0x202A...0x202E, 0x2066...0x2069: return true  // bidirectional embeddings, overrides and isolates
        case 0x2028, 0x2029: return !lines  // line and paragraph separators
        default: return false
        }
    }
}

extension String {
    /// The text without white space at either end, as `trimmingCharacters(in: .whitespaces)`
    /// gives it, but answered from the first and last bytes when there is nothing to trim
    /// (the usual case for a symbol or a token on every request): Foundation's trimming
    /// bridges to `NSString` and cost 4 % of the server's CPU under a trading load.
    var trimmingWhitespace: String {
        guard let first = utf8.first, let last = utf8.last, Self.isVisibleASCII(first), Self.isVisibleASCII(last) else {
            return trimmingCharacters(in: .whitespaces)
        }
        return self
    }

    /// Every white-space character is a control or space byte, or starts with a byte of
    /// 0x80 or more in UTF-8.
    private static func isVisibleASCII(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte < 0x7F
    }
}
