import Foundation
@testable import MockStock
import Testing

@Suite("Amounts as text")
struct DecimalTextTests {
    /// Money from `description`: at least two fraction digits.
    static func money(_ text: String) -> String {
        let text = text == "-0" ? "0" : text
        guard let dot = text.firstIndex(of: ".") else { return text + ".00" }
        let fraction = text.distance(from: dot, to: text.endIndex) - 1
        return fraction < 2 ? text + String(repeating: "0", count: 2 - fraction) : text
    }

    @Test("amounts are written exactly as Decimal's description writes them, money with at least two fraction digits")
    func plainText() {
        let cases: [(String, String)] = [
            ("0", "0.00"), ("0.00", "0.00"), ("-0", "0.00"), ("1.5", "1.50"), ("1.50", "1.50"), ("-1.5", "-1.50"),
            ("1500", "1500.00"), ("187.4312", "187.4312"), ("-0.001", "-0.001"), ("0.0001", "0.0001"),
            ("12345678901234567890123456789", "12345678901234567890123456789.00"), ("18446744073709551615", "18446744073709551615.00"),
            ("18446744073709551616.5", "18446744073709551616.50"),
        ]
        for (input, money) in cases {
            let value = Decimal(string: input)!
            #expect(value.plainText == value.description, "\(input)")
            #expect(value.moneyString == money, "\(input)")
        }
        // Against description over a fixed spread of amounts and of what arithmetic makes
        // of them (products, sums, quotients rounded to four places, trailing zeros).
        var seed: UInt64 = 7
        func next(_ range: Int64) -> Int64 {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Int64(bitPattern: seed >> 1) % range
        }
        for _ in 0..<5_000 {
            let cents = Decimal(next(1_000_000_000_000)) / 100
            let price = Decimal(next(100_000_000)) / 10_000
            let quantity = Decimal(next(10_000))
            for value in [cents, price, -price, price * quantity, cents - price * quantity, (cents / (quantity + 1)).rounded(4),
                          cents * 1_000_000, price / 1_000_000] {
                #expect(value.plainText == value.description, "\(value)")
                #expect(value.moneyString == Self.money(value.description), "\(value)")
            }
        }
    }
}
