import Foundation

/// What the audit log records: every action of a league's host and of an admin, by the
/// names clients filter on.
enum AuditAction: String, Sendable, CaseIterable {
    case leagueUpdate = "league.update"
    case leagueFreeze = "league.freeze"
    case leagueUnfreeze = "league.unfreeze"
    case leagueResetMember = "league.reset_member"
    case leagueKick = "league.kick"
    case leagueDelete = "league.delete"
    case leagueNews = "league.news"
    case leagueReportExport = "league.report_export"
    case leagueRosterCreate = "league.roster_create"
    case leaguePasswordReset = "league.password_reset"
    case leagueTeamCreate = "league.team_create"
    case leagueTeamMember = "league.team_member"
    case leagueMemberDelete = "league.member_delete"
    case leagueMarketAdvance = "league.market_advance"
    case leagueEventCreate = "league.event_create"
    case accountDelete = "account.delete"
    case adminPrices = "admin.prices"
    case adminQuotes = "admin.quotes"
    case adminInstrument = "admin.instrument"
    case adminCorporateAction = "admin.corporate_action"
    case adminBroadcast = "admin.broadcast"
    case adminFx = "admin.fx"
    case adminFunds = "admin.funds"
    case adminUserDelete = "admin.user_delete"
}

/// One value of an event's details: what changed, as field names, counts and ids. Never a
/// person's name, a password or a secret (`docs/SECURITY.md`).
enum AuditDetail: Encodable, Sendable, Equatable {
    case text(String)
    case number(Int)
    case amount(Decimal)
    case flag(Bool)
    case numbers([Int])
    case texts([String])

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .text(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .amount(let value): try container.encode(value.moneyString)
        case .flag(let value): try container.encode(value)
        case .numbers(let value): try container.encode(value)
        case .texts(let value): try container.encode(value)
        }
    }
}

/// Who acts, and in which request: what every audited action is given.
struct Actor: Sendable {
    let userID: Int
    let requestID: String?

    /// The event this actor's `action` writes.
    func event(
        _ action: AuditAction, league leagueID: Int? = nil, target targetUserID: Int? = nil, _ details: [String: AuditDetail] = [:]
    ) -> AuditEntry {
        AuditEntry(actorID: userID, action: action, leagueID: leagueID, targetUserID: targetUserID, details: details, requestID: requestID)
    }
}

/// An event about to be written, in the transaction of its action (`AuditStore.record`).
struct AuditEntry: Sendable {
    let actorID: Int
    let action: AuditAction
    let leagueID: Int?
    let targetUserID: Int?
    var details: [String: AuditDetail]
    let requestID: String?

    /// The details as the JSON object stored.
    var detailsJSON: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return (try? encoder.encode(details)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}

/// An event as the log shows it (`GET /api/leagues/{id}/audit`, `GET /api/admin/audit`).
struct AuditEvent: Encodable, Sendable {
    let id: Int
    let at: Date
    let actorId: Int
    /// Null once the actor's account is erased: the log keeps ids, not names.
    @NullEncoded var actorUsername: String?
    let action: String
    @NullEncoded var leagueId: Int?
    @NullEncoded var targetUserId: Int?
    let details: StoredJSON
    @NullEncoded var requestId: String?
}

/// A JSON value stored by the database, sent as it is.
struct StoredJSON: Encodable, Sendable {
    let text: String

    func encode(to encoder: any Encoder) throws {
        let value = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        try value.encode(to: encoder)
    }
}

/// Any JSON value, to carry stored JSON through `Encodable` answers.
enum JSONValue: Codable, Sendable {
    case null, bool(Bool), number(Decimal), string(String), array([JSONValue]), object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Decimal.self) { self = .number(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode([JSONValue].self) { self = .array(value) }
        else { self = .object(try container.decode([String: JSONValue].self)) }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}
