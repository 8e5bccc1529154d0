/// A SQL statement and its bound parameters.
///
/// Interpolated values become `$n` parameters, never SQL text:
///
///     let query: PostgresQuery = "SELECT name FROM users WHERE id = \(id)"
///
/// Trusted SQL fragments (a column list chosen by code, never by input) need the
/// explicit label: `"ORDER BY \(unescaped: column)"`.
public struct PostgresQuery: Sendable, Hashable, ExpressibleByStringInterpolation {
    public private(set) var sql: String
    public private(set) var binds: [PostgresBind]

    public init(unsafeSQL sql: String, binds: [PostgresBind] = []) {
        self.sql = sql
        self.binds = binds
    }

    public init(stringLiteral value: String) {
        self.init(unsafeSQL: value)
    }

    public init(stringInterpolation: StringInterpolation) {
        self.init(unsafeSQL: stringInterpolation.sql, binds: stringInterpolation.binds)
    }

    public struct StringInterpolation: StringInterpolationProtocol {
        var sql = ""
        var binds: [PostgresBind] = []

        public init(literalCapacity: Int, interpolationCount: Int) {
            sql.reserveCapacity(literalCapacity + interpolationCount * 3)
            binds.reserveCapacity(interpolationCount)
        }

        public mutating func appendLiteral(_ literal: String) {
            sql += literal
        }

        public mutating func appendInterpolation(_ value: some PostgresEncodable) {
            binds.append(PostgresBind(value))
            sql += "$\(binds.count)"
        }

        /// An optional value: `NULL` when nil (spelled out so the compiler knows it is meant).
        public mutating func appendInterpolation<Wrapped: PostgresEncodable>(_ value: Wrapped?) {
            binds.append(PostgresBind(value))
            sql += "$\(binds.count)"
        }

        /// Splices trusted SQL text; never pass user input here.
        public mutating func appendInterpolation(unescaped fragment: String) {
            sql += fragment
        }
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
