/// Encodes an optional as `null` instead of leaving its key out, for fields the API
/// lists as `T|null`: `@NullEncoded var leagueId: Int?`.
@propertyWrapper
struct NullEncoded<Value: Encodable & Sendable>: Encodable, Sendable {
    var wrappedValue: Value?

    init(wrappedValue: Value?) {
        self.wrappedValue = wrappedValue
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue {
            try container.encode(wrappedValue)
        } else {
            try container.encodeNil()
        }
    }
}
