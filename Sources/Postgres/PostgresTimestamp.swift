import Foundation

/// Converts between `Date` and PostgreSQL's ISO text form of timestamps, to the
/// microsecond, without a formatter or locale. Connections run with `TimeZone=UTC`
/// and `DateStyle=ISO`, so the server always writes `2024-03-01 14:05:09.123456+00`.
enum PostgresTimestamp {
    static func format(_ date: Date) -> String {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        let (days, microsOfDay) = CivilDate.floorDivide(micros, 86_400_000_000)
        let (year, month, day) = CivilDate.civil(fromDays: days)
        let seconds = microsOfDay / 1_000_000
        let fraction = microsOfDay % 1_000_000
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + " "
            + pad(seconds / 3600, 2) + ":" + pad(seconds / 60 % 60, 2) + ":" + pad(seconds % 60, 2)
            + "." + pad(fraction, 6) + "+00"
    }

    static func parse(_ bytes: ArraySlice<UInt8>) -> Date? {
        var reader = Reader(bytes: bytes)
        guard let year = reader.number(minDigits: 4, maxDigits: 7), reader.skip("-"),
            let month = reader.number(minDigits: 2, maxDigits: 2), reader.skip("-"),
            let day = reader.number(minDigits: 2, maxDigits: 2),
            (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        var micros: Int64 = 0
        if reader.skip(" ") || reader.skip("T") {
            guard let hour = reader.number(minDigits: 2, maxDigits: 2), reader.skip(":"),
                let minute = reader.number(minDigits: 2, maxDigits: 2), reader.skip(":"),
                let second = reader.number(minDigits: 2, maxDigits: 2),
                hour < 24, minute < 60, second < 61
            else { return nil }
            micros = ((hour * 60 + minute) * 60 + second) * 1_000_000
            if reader.skip(".") {
                var scale: Int64 = 100_000
                var digits = 0
                while let digit = reader.digit() {
                    micros += digit * scale
                    scale /= 10
                    digits += 1
                }
                guard digits > 0 else { return nil }
            }
            if let sign = reader.sign() {
                guard let offsetHours = reader.number(minDigits: 2, maxDigits: 2) else { return nil }
                var offsetSeconds = offsetHours * 3600
                if reader.skip(":") {
                    guard let offsetMinutes = reader.number(minDigits: 2, maxDigits: 2) else { return nil }
                    offsetSeconds += offsetMinutes * 60
                    if reader.skip(":") {
                        guard let extra = reader.number(minDigits: 2, maxDigits: 2) else { return nil }
                        offsetSeconds += extra
                    }
                }
                micros -= sign * offsetSeconds * 1_000_000
            }
        }
        guard reader.atEnd else { return nil }
        let total = CivilDate.days(fromCivil: year, month, day) * 86_400_000_000 + micros
        return Date(timeIntervalSince1970: Double(total) / 1_000_000)
    }

    private struct Reader {
        let bytes: ArraySlice<UInt8>
        var index: Int

        init(bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            self.index = bytes.startIndex
        }

        var atEnd: Bool { index == bytes.endIndex }

        mutating func skip(_ character: Unicode.Scalar) -> Bool {
            guard index < bytes.endIndex, bytes[index] == UInt8(ascii: character) else { return false }
            index += 1
            return true
        }

        mutating func digit() -> Int64? {
            guard index < bytes.endIndex else { return nil }
            let value = bytes[index] &- UInt8(ascii: "0")
            guard value < 10 else { return nil }
            index += 1
            return Int64(value)
        }

        mutating func number(minDigits: Int, maxDigits: Int) -> Int64? {
            var value: Int64 = 0
            var count = 0
            while count < maxDigits, let digit = digit() {
                value = value * 10 + digit
                count += 1
            }
            return count >= minDigits ? value : nil
        }

        mutating func sign() -> Int64? {
            if skip("+") { return 1 }
            if skip("-") { return -1 }
            return nil
        }
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
