/// The one rule for a day sent as text: `YYYY-MM-DD`, a real day of the Gregorian
/// calendar, from the year 1800 (price files, corporate actions).
enum CalendarDay {
    static func isValid(_ field: ArraySlice<UInt8>) -> Bool {
        let start = field.startIndex
        guard field.count == 10, field[start + 4] == UInt8(ascii: "-"), field[start + 7] == UInt8(ascii: "-") else { return false }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let byte = field[start + index]
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            year >= 1800, (1...12).contains(month), day >= 1
        else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        return day <= lengths[month - 1]
    }

    static func isValid(_ text: String) -> Bool {
        isValid(ArraySlice(text.utf8))
    }
}
