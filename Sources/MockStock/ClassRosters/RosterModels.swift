import Foundation
import Hummingbird

/// `POST /api/leagues/{id}/roster`: the class's names, as the host types them.
struct RosterRequest: Decodable {
    struct Student: Decodable {
        let displayName: String
    }

    let students: [Student]
}

/// A student's login, shown once: the password is stored only as a hash.
struct RosterStudent: Encodable, Sendable {
    let userId: Int
    let username: String
    let displayName: String
    let password: String
}

struct Roster: ResponseEncodable {
    let students: [RosterStudent]
}

/// `POST /api/leagues/{id}/members/{userId}/password`: the new password, shown once.
struct NewPassword: ResponseEncodable {
    let password: String
}

/// What the host of a class may not do.
enum RosterError: Error, Equatable {
    /// The account is not a member the caller manages in this league.
    case notManaged
}

/// Logins the server makes for a class: names a student can type and read aloud, from an
/// alphabet without look-alikes (no 0/o, 1/i/l), drawn from the system's cryptographic
/// generator.
enum GeneratedCredentials {
    /// The join code's letters and digits, in lower case.
    static let alphabet = JoinCode.alphabet.map { Character($0.lowercased()) }

    /// Three groups of four, like `k7mq-4rtz-p9xa`: 14 characters, about 59 bits.
    static func password() -> String {
        (0..<3).map { _ in random(4) }.joined(separator: "-")
    }

    /// The display name's first word in plain lower-case letters and digits (at most 12;
    /// `student` when none is left), a hyphen and four random characters, like `ana-k7mq`:
    /// 3–32 characters of `a-z0-9-`.
    static func username(for displayName: String) -> String {
        let folded = displayName.folding(options: [.diacriticInsensitive, .caseInsensitive, .widthInsensitive], locale: nil).lowercased()
        let firstWord = folded.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).first.map(String.init) ?? ""
        let plain = String(firstWord.unicodeScalars.filter { ("a"..."z").contains($0) || ("0"..."9").contains($0) }.map(Character.init).prefix(12))
        return (plain.isEmpty ? "student" : plain) + "-" + random(4)
    }

    /// `count` characters of the alphabet.
    static func random(_ count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<count).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }
}
