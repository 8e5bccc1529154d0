import Foundation

/// A field of a `PATCH` body: left out (unchanged), `null` (cleared) or a new value.
enum PatchField<Value: Decodable & Sendable>: Sendable {
    case unchanged
    case cleared
    case set(Value)

    init<Key: CodingKey>(_ container: KeyedDecodingContainer<Key>, _ key: Key) throws {
        if !container.contains(key) {
            self = .unchanged
        } else if try container.decodeNil(forKey: key) {
            self = .cleared
        } else {
            self = .set(try container.decode(Value.self, forKey: key))
        }
    }

    /// Whether the body names the field, and the value it gives (nil when cleared).
    var change: (named: Bool, value: Value?) {
        switch self {
        case .unchanged: (false, nil)
        case .cleared: (true, nil)
        case .set(let value): (true, value)
        }
    }
}

/// The keys of a JSON object, whatever they are: to refuse the ones a body may not carry.
struct AnyCodingKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }

    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
