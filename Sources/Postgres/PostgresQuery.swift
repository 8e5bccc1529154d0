/// A SQL statement and its bound parameters.
///
/// Interpolated values become `$n` parameters, never SQL text:
///
///     let query: PostgresQuery = "SELECT name FROM users WHERE id = \(id)"
///
/// A query may interpolate another query as a fragment; the fragment's parameters join
/// this query's and its placeholders are renumbered, so statements are built from parts
/// without any value reaching SQL text:
///
///     let mine: PostgresQuery = "user_id = \(userID)"
///     let query: PostgresQuery = "SELECT id FROM portfolios WHERE \(mine) AND id = \(id)"
///
/// Trusted SQL text chosen by code (a column list, never input) needs the explicit
/// label: `"ORDER BY \(unescaped: column)"`.
public struct PostgresQuery: Sendable, Hashable, ExpressibleByStringInterpolation {
    /// The statement with `$1`, `$2`, ... in place of the parameters.
    public let sql: String
    public let binds: [PostgresBind]
    /// The SQL text between the parameters (one more than `binds`), kept so that this
    /// query can be spliced into another and renumbered there.
    private let literals: [String]

    /// SQL text without parameters. Never build it from input.
    public init(unsafeSQL sql: String) {
        self.init(literals: [sql], binds: [])
    }

    private init(literals: [String], binds: [PostgresBind]) {
        self.literals = literals
        self.binds = binds
        var sql = literals[0]
        for index in binds.indices {
            sql += "$\(index + 1)"
            sql += literals[index + 1]
        }
        self.sql = sql
    }

    public init(stringLiteral value: String) {
        self.init(unsafeSQL: value)
    }

    public init(stringInterpolation: StringInterpolation) {
        self.init(literals: stringInterpolation.literals, binds: stringInterpolation.binds)
    }

    /// The fragments one after another with `separator` between them (`AND`, `, `, ...).
    public static func joined(_ fragments: [PostgresQuery], separator: String) -> PostgresQuery {
        var result = StringInterpolation(literalCapacity: 0, interpolationCount: 0)
        for (index, fragment) in fragments.enumerated() {
            if index > 0 { result.appendLiteral(separator) }
            result.appendInterpolation(fragment)
        }
        return PostgresQuery(stringInterpolation: result)
    }

    /// The statement as text with each parameter replaced by what `render` returns for it,
    /// for tools that take SQL text (a pgbench script). Never send the result to a server
    /// in place of the query: the values are no longer bound.
    public func rendered(_ render: (_ index: Int, _ bind: PostgresBind) -> String) -> String {
        var text = literals[0]
        for (index, bind) in binds.enumerated() {
            text += render(index, bind)
            text += literals[index + 1]
        }
        return text
    }

    public struct StringInterpolation: StringInterpolationProtocol {
        fileprivate var literals = [""]
        fileprivate var binds: [PostgresBind] = []

        public init(literalCapacity: Int, interpolationCount: Int) {
            literals.reserveCapacity(interpolationCount + 1)
            binds.reserveCapacity(interpolationCount)
        }

        public mutating func appendLiteral(_ literal: String) {
            literals[literals.count - 1] += literal
        }

        public mutating func appendInterpolation(_ value: some PostgresEncodable) {
            binds.append(PostgresBind(value))
            literals.append("")
        }

        /// An optional value: `NULL` when nil (spelled out so the compiler knows it is meant).
        public mutating func appendInterpolation<Wrapped: PostgresEncodable>(_ value: Wrapped?) {
            binds.append(PostgresBind(value))
            literals.append("")
        }

        /// Splices another query: its text in place, its parameters after the ones so far.
        public mutating func appendInterpolation(_ fragment: PostgresQuery) {
            literals[literals.count - 1] += fragment.literals[0]
            binds += fragment.binds
            literals += fragment.literals.dropFirst()
        }

        /// Splices trusted SQL text; never pass user input here.
        public mutating func appendInterpolation(unescaped fragment: String) {
            literals[literals.count - 1] += fragment
        }
    }

    public static func == (lhs: PostgresQuery, rhs: PostgresQuery) -> Bool {
        lhs.sql == rhs.sql && lhs.binds == rhs.binds
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(sql)
        hasher.combine(binds)
    }
}

/// A parameter: its value and declared type.
public struct PostgresBind: Sendable, Hashable {
    public let value: PostgresValue
    public let dataType: PostgresDataType

    public init(_ value: some PostgresEncodable) {
        self.value = value.postgresValue
        self.dataType = type(of: value).postgresDataType
    }
}
