/// An error from PostgreSQL or from the driver.
///
/// `description` is safe to show anywhere: it names the kind, the SQLSTATE and the
/// constraint, never the server's message, which can quote row values.
/// `logDescription` carries everything, for logs only.
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, broadly.
    public enum Kind: String, Sendable {
        /// The server rejected a statement; `code` says why.
        case server
        /// The connection could not be opened or was lost.
        case connection
        /// No connection became free within the pool's acquire timeout.
        case acquireTimeout
        /// The pool has been shut down.
        case poolClosed
        /// A value could not be sent (for example a string holding a NUL byte).
        case encoding
        /// A column could not be decoded into the requested Swift type.
        case decoding
        /// The server answered something the driver did not expect.
        case unexpectedResponse
    }

    public let kind: Kind
    /// The SQLSTATE, when the server (or the driver, mirroring the server) gave one.
    public let code: Code?
    /// The primary message. May quote data: log it, never return it to a client.
    public let message: String
    public let detail: String?
    public let hint: String?
    public let constraint: String?
    public let table: String?
    public let column: String?

    public init(
        kind: Kind,
        code: Code? = nil,
        message: String,
        detail: String? = nil,
        hint: String? = nil,
        constraint: String? = nil,
        table: String? = nil,
        column: String? = nil
    ) {
        self.kind = kind
        self.code = code
        self.message = message
        self.detail = detail
        self.hint = hint
        self.constraint = constraint
        self.table = table
        self.column = column
    }

    public var description: String {
        var parts = ["kind: \(kind.rawValue)"]
        if let code { parts.append("sqlstate: \(code.rawValue)") }
        if let constraint { parts.append("constraint: \(constraint)") }
        return "PostgresError(\(parts.joined(separator: ", ")))"
    }

    /// What the server log may show. The DETAIL line is left out: for constraint errors
    /// it quotes the row or key ("Failing row contains (…)"), which can hold secrets such
    /// as a password hash. (`detail` itself stays available to code that needs it.)
    public var logDescription: String {
        var text = description + " " + message
        if let hint { text += " hint: \(hint)" }
        if let table { text += " table: \(table)" }
        if let column { text += " column: \(column)" }
        return text
    }

    /// True when the connection is gone or the server is unavailable, so the request
    /// may succeed later on a new connection.
    public var isConnectionFailure: Bool {
        if kind == .connection || kind == .acquireTimeout || kind == .poolClosed { return true }
        guard let code else { return false }
        return code.rawValue.hasPrefix("08")
            || code == .adminShutdown || code == .crashShutdown || code == .cannotConnectNow
    }

    /// True for failures that a transaction may simply run again to get past.
    public var isTransient: Bool {
        code == .serializationFailure || code == .deadlockDetected
    }

    /// A SQLSTATE code, with names for the ones the application acts on.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The two-character class, e.g. `23` for integrity constraint violations.
        public var errorClass: String { String(rawValue.prefix(2)) }

        public static let connectionException = Code("08000")
        public static let connectionFailure = Code("08006")
        public static let cardinalityViolation = Code("21000")
        public static let stringDataRightTruncation = Code("22001")
        public static let numericValueOutOfRange = Code("22003")
        public static let invalidDatetimeFormat = Code("22007")
        public static let datetimeFieldOverflow = Code("22008")
        public static let characterNotInRepertoire = Code("22021")
        public static let invalidTextRepresentation = Code("22P02")
        public static let badCopyFileFormat = Code("22P04")
        public static let integrityConstraintViolation = Code("23000")
        public static let notNullViolation = Code("23502")
        public static let foreignKeyViolation = Code("23503")
        public static let uniqueViolation = Code("23505")
        public static let checkViolation = Code("23514")
        public static let exclusionViolation = Code("23P01")
        public static let featureNotSupported = Code("0A000")
        public static let invalidTransactionState = Code("25000")
        public static let readOnlySQLTransaction = Code("25006")
        public static let inFailedSQLTransaction = Code("25P02")
        public static let invalidPassword = Code("28P01")
        public static let serializationFailure = Code("40001")
        public static let deadlockDetected = Code("40P01")
        public static let syntaxError = Code("42601")
        public static let insufficientPrivilege = Code("42501")
        public static let undefinedColumn = Code("42703")
        public static let undefinedFunction = Code("42883")
        public static let undefinedTable = Code("42P01")
        public static let duplicateTable = Code("42P07")
        public static let lockNotAvailable = Code("55P03")
        public static let queryCanceled = Code("57014")
        public static let adminShutdown = Code("57P01")
        public static let crashShutdown = Code("57P02")
        public static let cannotConnectNow = Code("57P03")
        public static let raiseException = Code("P0001")
    }
}

extension PostgresError {
    static func decoding(column: String, _ message: String) -> PostgresError {
        PostgresError(kind: .decoding, message: "column \"\(column)\": \(message)", column: column)
    }
}
