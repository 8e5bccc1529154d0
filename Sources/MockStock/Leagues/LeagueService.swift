import Foundation
import Postgres

/// The rules of leagues: what a league may be, who may join, leave, kick and delete.
struct LeagueService: Sendable {
    let store: LeagueStore
    let standings: StandingsStore
    let market: MarketStore
    /// For the rate now of a league's own currency.
    let quotes: any QuoteProvider
    /// Makes a scenario league's own market.
    let markets: LeagueMarketService

    static let defaultStartingCash = Decimal(string: "100000.00")!

    func create(
        name rawName: String, mode rawMode: String?, startingCash: Decimal?, currency rawCurrency: String? = nil, startsAt: Date?, endsAt: Date?,
        maxMembers: Int?, rules rulesInput: TradingRulesInput? = nil, bots: String? = nil, joinUntil: Date? = nil,
        ownerPlays: Bool = true, resetsAllowed: Int = 0, journalRequired: Bool = false, rankBy: String? = nil,
        benchmark: String? = nil, deleteManagedAfterDays: Int? = nil, teams: Bool = false, market marketRequest: LeagueMarketRequest? = nil,
        ownerID: Int
    ) async throws -> LeagueStore.LeagueRecord {
        try Self.checkRetention(deleteManagedAfterDays)
        let name = rawName.trimmingCharacters(in: .whitespacesAndNewlines)
        try TextInput.check(name, field: "name", length: 1...64)
        guard let mode = LeagueMode(rawValue: rawMode ?? LeagueMode.shared.rawValue) else {
            throw InvalidInput("mode must be shared or isolated.")
        }
        let startingCash = startingCash ?? Self.defaultStartingCash
        guard startingCash > 0, startingCash <= 1_000_000_000 else {
            throw InvalidInput("startingCash must be a positive amount up to 1000000000.")
        }
        let startsAt = startsAt ?? Date()
        if let endsAt, endsAt <= startsAt { throw InvalidInput("endsAt must be after startsAt.") }
        try Self.checkMaxMembers(maxMembers)
        guard (0...100).contains(resetsAllowed) else { throw InvalidInput("resetsAllowed must be from 0 to 100.") }
        if resetsAllowed > 0 && mode == .shared {
            throw InvalidInput("resetsAllowed applies to an isolated league: a shared league's members play their personal portfolios.")
        }
        if journalRequired && mode == .shared { throw Self.journalInSharedLeague }
        if teams && mode == .shared {
            throw InvalidInput("teams applies to an isolated league: each team trades a league portfolio of its own.")
        }
        var rules = try rulesInput?.rules(over: store.serverRules) ?? store.serverRules
        try await setCurrency(rawCurrency, of: &rules, mode: mode)
        if rules != store.serverRules && mode == .shared {
            throw InvalidInput("rules apply to the league portfolios of an isolated league; in a shared league members trade their personal portfolios.")
        }
        var openMarket: (@Sendable (Int, PostgresSession) async throws -> Void)?
        if let marketRequest {
            guard mode == .isolated else {
                throw InvalidInput("market applies to an isolated league: its league portfolios trade the league's own market.")
            }
            guard rules.allowedSymbols == nil else {
                throw InvalidInput("rules.allowedSymbols does not apply to a league with a market of its own: it trades the instruments of its window.")
            }
            guard (benchmark ?? "market").lowercased() == "market" else {
                throw InvalidInput("benchmark of a league with a market of its own is its market (market): its instruments are made with it.")
            }
            openMarket = try await markets.prepare(marketRequest, startsAt: startsAt)
        }
        if let symbols = rules.allowedSymbols?.sorted() {
            let known = try await market.names(for: symbols)
            if let unknown = symbols.first(where: { known[$0] == nil }) {
                throw InvalidInput("rules.allowedSymbols holds \(unknown), which is no instrument.")
            }
        }
        return try await store.create(
            .init(name: name, mode: mode, startingCash: startingCash, startsAt: startsAt, endsAt: endsAt, maxMembers: maxMembers,
                  rules: rules, bots: try BotPolicy.parse(bots) ?? .allowed, joinUntil: joinUntil, ownerPlays: ownerPlays,
                  resetsAllowed: resetsAllowed, journalRequired: journalRequired, rankBy: try RankBy.parse(rankBy) ?? .netWorth,
                  benchmark: try await BenchmarkStore.named(benchmark ?? "market", in: market),
                  deleteManagedAfterDays: deleteManagedAfterDays, teams: teams),
            ownerID: ownerID, then: openMarket
        )
    }

    /// A league in another currency than dollars: isolated (its league portfolios hold the
    /// currency), and one with a rate now. The spread is for such a league only.
    private func setCurrency(_ text: String?, of rules: inout TradingRules, mode: LeagueMode) async throws {
        let currency = try text.map { try FxController.currency($0, "currency") } ?? FxCurrency.dollar
        guard currency != FxCurrency.dollar else {
            guard rules.fxSpreadPercent == 0 else {
                throw InvalidInput("rules.fxSpreadPercent applies to a league in another currency than USD.")
            }
            return
        }
        guard mode == .isolated else {
            throw InvalidInput("A league in \(currency) must be isolated: its league portfolios hold the currency; a shared league trades personal portfolios in USD.")
        }
        guard try await quotes.fxRate(from: FxCurrency.dollar, to: currency) != nil else {
            throw InvalidInput("currency \(currency) has no exchange rate against USD.")
        }
        rules.currency = currency
    }

    func leagues(member userID: Int) async throws -> [LeagueStore.LeagueRecord] {
        try await store.leagues(member: userID)
    }

    /// The league if `userID` is a member of it; `noSuchLeague` otherwise, so non-members
    /// learn nothing.
    func league(id: Int, member userID: Int) async throws -> LeagueStore.LeagueRecord {
        guard let league = try await store.league(id: id, member: userID) else { throw LeagueError.noSuchLeague }
        return league
    }

    /// A page of the league's standings: of everyone, or of humans or bots alone (by
    /// default, as the league's bot policy says).
    func standings(
        of league: LeagueStore.LeagueRecord, players: StandingsStore.Players? = nil, order: RankBy? = nil, limit: Int, offset: Int
    ) async throws -> StandingsStore.Page {
        try await standings.page(of: league, players: players ?? league.bots.defaultPlayers, order: order, limit: limit, offset: offset)
    }

    /// A shared league's members trade their personal portfolios, which no league's rule binds.
    static let journalInSharedLeague = InvalidInput(
        "journalRequired applies to an isolated league: a shared league's members trade their personal portfolios.")

    /// Days after a league's end before its managed students are erased: 0 to 365.
    static func checkRetention(_ days: Int?) throws {
        if let days, !(0...365).contains(days) {
            throw InvalidInput("deleteManagedAfterDays must be from 0 to 365, or null to keep the accounts.")
        }
    }

    static func checkMaxMembers(_ maxMembers: Int?) throws {
        if let maxMembers, !(1...1_000_000).contains(maxMembers) {
            throw InvalidInput("maxMembers must be from 1 to 1000000.")
        }
    }

    /// Changes what the owner may change after creation: the name, the end, the late-join
    /// window, the member cap and the bot policy (the trading rules stay as created). A new
    /// end must be in the future and after the start; a finished league changes no more.
    func update(
        _ league: LeagueStore.LeagueRecord, name rawName: String?, bots: String?, endsAt: PatchField<Date>, joinUntil: PatchField<Date>,
        maxMembers: PatchField<Int>, journalRequired: Bool? = nil, rankBy: String? = nil, benchmark: String? = nil,
        deleteManagedAfterDays: PatchField<Int> = .unchanged, by actor: Actor, now: Date = Date()
    ) async throws -> LeagueStore.LeagueRecord {
        guard league.ownerID == actor.userID else { throw LeagueError.ownerOnly(action: "change it") }
        var changes = LeagueStore.Changes()
        if let rawName {
            let name = rawName.trimmingCharacters(in: .whitespacesAndNewlines)
            try TextInput.check(name, field: "name", length: 1...64)
            changes.name = name
        }
        changes.bots = try BotPolicy.parse(bots)
        if journalRequired == true && league.mode == .shared { throw Self.journalInSharedLeague }
        changes.journalRequired = journalRequired
        changes.rankBy = try RankBy.parse(rankBy)
        if let benchmark {
            changes.benchmark = try await BenchmarkStore.named(benchmark, in: market, league: league.market == nil ? nil : league.id)
        }
        changes.endsAt = endsAt.change
        if let end = changes.endsAt.value, end <= max(league.startsAt, now) {
            throw InvalidInput("endsAt must be in the future and after startsAt.")
        }
        changes.joinUntil = joinUntil.change
        changes.maxMembers = maxMembers.change
        try Self.checkMaxMembers(changes.maxMembers.value)
        changes.deleteManagedAfterDays = deleteManagedAfterDays.change
        try Self.checkRetention(changes.deleteManagedAfterDays.value)
        let audit = actor.event(.leagueUpdate, league: league.id, ["fields": .texts(changes.fieldsNamed)])
        guard let updated = try await store.update(leagueID: league.id, changes, audit: audit) else { throw LeagueError.leagueEnded }
        return updated
    }

    /// Freezes trading (the host's call): nothing fills and no trade or new order is taken
    /// on the league's portfolios until it is unfrozen; cancelling still works. The reason
    /// (at most 200 characters) is told to members.
    func freeze(_ league: LeagueStore.LeagueRecord, reason rawReason: String?, by actor: Actor) async throws -> LeagueStore.LeagueRecord {
        guard league.ownerID == actor.userID else { throw LeagueError.ownerOnly(action: "freeze trading") }
        guard league.mode == .isolated else { throw LeagueError.sharedLeague }
        let reason = rawReason?.trimmingCharacters(in: .whitespacesAndNewlines)
        if let reason { try TextInput.check(reason, field: "reason", length: 0...200) }
        let told = reason?.isEmpty == false ? reason : nil
        let audit = actor.event(.leagueFreeze, league: league.id, ["reasonGiven": .flag(told != nil)])
        guard let frozen = try await store.setFrozen(true, reason: told, leagueID: league.id, audit: audit) else {
            throw LeagueError.leagueEnded
        }
        return frozen
    }

    func unfreeze(_ league: LeagueStore.LeagueRecord, by actor: Actor) async throws -> LeagueStore.LeagueRecord {
        guard league.ownerID == actor.userID else { throw LeagueError.ownerOnly(action: "unfreeze trading") }
        guard league.mode == .isolated else { throw LeagueError.sharedLeague }
        guard let open = try await store.setFrozen(false, reason: nil, leagueID: league.id, audit: actor.event(.leagueUnfreeze, league: league.id)) else {
            throw LeagueError.leagueEnded
        }
        return open
    }

    /// The host resets a member's league portfolio. A host who plays and names their own
    /// seat makes their own reset, which counts against the allowance like anyone's.
    func reset(member target: Int, of league: LeagueStore.LeagueRecord, by actor: Actor) async throws -> LeagueStore.Reset {
        guard league.ownerID == actor.userID else { throw LeagueError.ownerOnly(action: "reset a member's portfolio") }
        let audit = actor.event(.leagueResetMember, league: league.id, target: target)
        if target == actor.userID { return try await resetOwn(league, userID: actor.userID, audit: audit) }
        return try Self.done(try await store.reset(leagueID: league.id, userID: target, own: false, audit: audit), noSeat: .noSuchMember)
    }

    /// A member resets their own league portfolio, while the league's allowance lasts
    /// (`audit`: the host resetting their own seat through the host's route).
    func resetOwn(_ league: LeagueStore.LeagueRecord, userID: Int, audit: AuditEntry? = nil) async throws -> LeagueStore.Reset {
        try Self.done(try await store.reset(leagueID: league.id, userID: userID, own: true, audit: audit), noSeat: .notPlaying,
                      allowed: league.resetsAllowed)
    }

    private static func done(_ outcome: LeagueStore.ResetOutcome, noSeat: LeagueError, allowed: Int = 0) throws -> LeagueStore.Reset {
        switch outcome {
        case .reset(let reset): return reset
        case .notMember: throw noSeat
        case .sharedLeague: throw LeagueError.sharedLeague
        case .ended: throw LeagueError.leagueEnded
        case .noResetsLeft: throw LeagueError.noResetsLeft(allowed: allowed)
        case .teamLeague: throw LeagueError.teamLeague
        }
    }

    /// The top of a league's standings for those of `userIDs` who are still members (none
    /// when the league is gone or none of them is a member).
    func standings(ofLeague id: Int, forMembers userIDs: [Int], limit: Int) async throws -> (page: StandingsStore.Page, members: Set<Int>)? {
        let members = try await store.members(of: id, among: userIDs)
        guard !members.isEmpty, let league = try await store.league(id: id) else { return nil }
        return (try await standings.page(of: league, players: league.bots.defaultPlayers, limit: limit, offset: 0), members)
    }

    /// Each member's trades and notes in the league (the gradebook's, and the host's page's).
    func activity(of league: LeagueStore.LeagueRecord) async throws -> [Int: Gradebook.Activity] {
        try await store.activity(of: league)
    }

    func teamSeats(leagueID: Int) async throws -> [LeagueStore.TeamSeat] {
        try await store.teamSeats(leagueID: leagueID)
    }

    func history(leagueID: Int, userID: Int) async throws -> [StandingsStore.HistoryPoint] {
        try await standings.history(leagueID: leagueID, userID: userID)
    }

    func join(code: String, userID: Int) async throws -> LeagueStore.LeagueRecord {
        guard (8...64).contains(code.count) else { throw LeagueError.noLeagueWithCode }
        let (outcome, league) = try await store.join(code: code, userID: userID)
        switch outcome {
        case .ok:
            guard let league else { throw LeagueError.noLeagueWithCode }
            return league
        case .notFound: throw LeagueError.noLeagueWithCode
        case .banned: throw LeagueError.bannedFromLeague
        case .alreadyMember: throw LeagueError.alreadyMember
        case .ended: throw LeagueError.leagueEnded
        case .full: throw LeagueError.leagueFull
        case .botsForbidden: throw LeagueError.botsForbidden
        case .joinClosed: throw LeagueError.joinClosed
        }
    }

    /// Leaving; when the owner leaves, the league is deleted (a host's action, in the log).
    func leave(_ league: LeagueStore.LeagueRecord, by actor: Actor) async throws {
        if league.ownerID == actor.userID {
            try await store.delete(leagueID: league.id, audit: actor.event(.leagueDelete, league: league.id, ["ownerLeft": .flag(true)]))
        } else {
            _ = try await store.removeMember(leagueID: league.id, userID: actor.userID, ban: false)
        }
    }

    /// Removes a member for good (banned, told why); the owner's call alone.
    func kick(_ target: Int, from league: LeagueStore.LeagueRecord, by actor: Actor) async throws {
        guard league.ownerID == actor.userID else { throw LeagueError.ownerOnly(action: "kick members") }
        guard target != actor.userID else { throw LeagueError.ownerCannotKickThemself }
        guard try await store.removeMember(leagueID: league.id, userID: target, ban: true,
                                           audit: actor.event(.leagueKick, league: league.id, target: target)) else {
            throw LeagueError.noSuchMember
        }
    }

    func delete(_ league: LeagueStore.LeagueRecord, by actor: Actor) async throws {
        guard league.ownerID == actor.userID else { throw LeagueError.ownerOnly(action: "delete it") }
        try await store.delete(leagueID: league.id, audit: actor.event(.leagueDelete, league: league.id))
    }
}
