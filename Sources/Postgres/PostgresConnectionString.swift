import CLibPQ
import Foundation

extension PostgresConfiguration {
    /// The connection string as keyword/value pairs: a conninfo string or URI parsed by
    /// libpq, or a bare word taken as the database name.
    func parsedConnectionString() throws -> [(String, String)] {
        let text = connectionString.trimmingCharacters(in: .whitespaces)
        if text.isEmpty { return [] }
        let isConnInfo = text.contains("=") || text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
        if !isConnInfo { return [("dbname", text)] }
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(text, &error) else {
            let message = error.map { String(cString: $0) } ?? "invalid connection string"
            if let error { PQfreemem(error) }
            throw PostgresError(kind: .connection, message: message.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        defer { PQconninfoFree(options) }
        var parsed: [(String, String)] = []
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val {
                parsed.append((String(cString: keyword), String(cString: value)))
            }
            option += 1
        }
        return parsed
    }
}
