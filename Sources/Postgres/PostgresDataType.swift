/// A PostgreSQL type, by OID.
public struct PostgresDataType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }

    /// Lets the server infer the type from the statement, as it does for a quoted literal.
    public static let unspecified = PostgresDataType(0)
    public static let bool = PostgresDataType(16)
    public static let bytea = PostgresDataType(17)
    public static let name = PostgresDataType(19)
    public static let int8 = PostgresDataType(20)
    public static let int2 = PostgresDataType(21)
    public static let int4 = PostgresDataType(23)
    public static let text = PostgresDataType(25)
    public static let oid = PostgresDataType(26)
    public static let json = PostgresDataType(114)
    public static let float4 = PostgresDataType(700)
    public static let float8 = PostgresDataType(701)
    public static let unknown = PostgresDataType(705)
    public static let boolArray = PostgresDataType(1000)
    public static let int4Array = PostgresDataType(1007)
    public static let textArray = PostgresDataType(1009)
    public static let int8Array = PostgresDataType(1016)
    public static let bpchar = PostgresDataType(1042)
    public static let varchar = PostgresDataType(1043)
    public static let timestamptzArray = PostgresDataType(1185)
    public static let numericArray = PostgresDataType(1231)
    public static let date = PostgresDataType(1082)
    public static let timestamp = PostgresDataType(1114)
    public static let timestamptz = PostgresDataType(1184)
    public static let numeric = PostgresDataType(1700)
    public static let uuid = PostgresDataType(2950)
    public static let jsonb = PostgresDataType(3802)

    static let names: [UInt32: String] = [
        0: "unspecified", 16: "bool", 17: "bytea", 19: "name", 20: "int8", 21: "int2", 23: "int4",
        25: "text", 26: "oid", 114: "json", 700: "float4", 701: "float8", 705: "unknown",
        1000: "bool[]", 1007: "int4[]", 1009: "text[]", 1016: "int8[]", 1042: "bpchar",
        1043: "varchar", 1082: "date", 1185: "timestamptz[]", 1231: "numeric[]", 1114: "timestamp", 1184: "timestamptz", 1700: "numeric",
        2950: "uuid", 3802: "jsonb",
    ]

    public var description: String { Self.names[rawValue] ?? "oid \(rawValue)" }

    var isTextual: Bool {
        switch self {
        case .text, .varchar, .bpchar, .name, .unknown, .json, .jsonb, .uuid: true
        default: false
        }
    }

    var isInteger: Bool { self == .int2 || self == .int4 || self == .int8 || self == .oid }
}
