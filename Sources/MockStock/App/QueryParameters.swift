import Hummingbird

/// `limit` and `offset` query parameters as openapi.yaml defines them.
struct Pagination {
    let limit: Int
    let offset: Int

    init(_ parameters: Parameters, defaultLimit: Int, maximum: Int = 200) throws {
        limit = try Self.limit(parameters, default: defaultLimit, maximum: maximum)
        let offsetText = parameters.get("offset") ?? "0"
        guard let offset = Int(offsetText), offset >= 0, offset <= 1_000_000_000 else {
            throw InvalidInput("offset must be a whole number, 0 or more.")
        }
        self.offset = offset
    }

    /// The limit: `default` when absent, clamped to `maximum`, 422 when not a positive number.
    static func limit(_ parameters: Parameters, default fallback: Int, maximum: Int) throws -> Int {
        guard let text = parameters.get("limit") else { return fallback }
        guard let value = Int(text), value >= 1 else {
            throw InvalidInput("limit must be a whole number, 1 or more.")
        }
        return min(value, maximum)
    }
}

extension Request {
    /// An optional positive whole-number query parameter; 422 when present but not one.
    func positiveInteger(_ name: String) throws -> Int? {
        guard let text = uri.queryParameters.get(name), !text.isEmpty else { return nil }
        guard let value = Int(text), value > 0 else { throw InvalidInput("\(name) must be a positive whole number.") }
        return value
    }
}
