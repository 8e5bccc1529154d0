import Foundation
import Postgres

/// The rules of scenario leagues (docs/leagues.md, "Scenario leagues"): a league with a
/// market of its own, replaying a window of stored history on the league's clock, blind
/// or not, with events its host scripts.
struct LeagueMarketService: Sendable {
    let store: LeagueMarketStore
    /// The league's standings, set against its market.
    let standings: StandingsStore
    let hours: MarketHours
    /// Told of the league's new prices after each advance: its orders fill against them.
    let pricesStored: PricesStored
    let now: @Sendable () -> Date

    /// Checks a new league's market; returns what makes it, to run in the transaction that
    /// creates the league. Its bars are dated one trading day per league day from the
    /// league's start (`MarketHours.tradingDays`), so no chart shows a date of the period.
    func prepare(
        _ request: LeagueMarketRequest, startsAt: Date
    ) async throws -> @Sendable (_ leagueID: Int, _ session: PostgresSession) async throws -> Void {
        let spec = try LeagueMarketSpec(request)
        let realDays = try await store.tradingDays(from: spec.from, to: spec.to)
        guard realDays.count >= 2 else {
            throw InvalidInput("market: the stored history holds fewer than two trading days from \(spec.from) to \(spec.to).")
        }
        guard realDays.count <= LeagueMarketSpec.maxDays else {
            throw InvalidInput("market: a window holds at most \(LeagueMarketSpec.maxDays) trading days; this one holds \(realDays.count).")
        }
        let barDays = hours.tradingDays(count: realDays.count, from: hours.day(of: startsAt))
        return { leagueID, session in
            try await LeagueMarketStore.open(leagueID: leagueID, spec: spec, realDays: realDays, barDays: barDays, in: session)
        }
    }

    /// The league's market as its members see it: blind, its real symbols, names and dates
    /// only once the league has ended.
    func market(of league: LeagueStore.LeagueRecord) async throws -> LeagueMarket {
        guard let (market, instruments) = try await store.market(leagueID: league.id) else { throw LeagueMarketError.noMarket }
        let revealed = !market.blind || market.ended
        let marketReturn = market.marketReturn ?? 0
        let ranked = try await standings.page(of: league, players: league.bots.defaultPlayers, limit: 200, offset: 0).items
        return LeagueMarket(
            kind: market.kind, day: market.day, days: market.days, blind: market.blind, ended: market.ended,
            from: revealed ? market.from : nil, to: revealed ? market.to : nil, dayMinutes: market.dayMinutes,
            nextDayAt: market.nextDayAt, marketReturnPercent: marketReturn.moneyString,
            symbols: instruments.map {
                LeagueMarket.Instrument(
                    symbol: Symbol.shown($0.symbol), name: $0.name, price: $0.price?.moneyString, firstPrice: $0.firstPrice?.moneyString,
                    changePercent: $0.change?.moneyString, realSymbol: revealed ? $0.realSymbol : nil, realName: revealed ? $0.realName : nil
                )
            },
            againstMarket: ranked.map { AgainstMarket($0, market: marketReturn) }
        )
    }

    /// The host moves the market on `days` league days (1 by default, at most to the
    /// window's last day), in a league whose host advances it.
    func advance(_ league: LeagueStore.LeagueRecord, days: Int?, by actor: Actor) async throws -> LeagueMarket {
        guard league.ownerID == actor.userID else { throw LeagueError.ownerOnly(action: "advance the league's market") }
        guard let summary = league.market else { throw LeagueMarketError.noMarket }
        let days = days ?? 1
        guard (1...LeagueMarketSpec.maxDays).contains(days) else {
            throw InvalidInput("days must be from 1 to \(LeagueMarketSpec.maxDays).")
        }
        guard summary.dayMinutes == nil else { throw LeagueMarketError.onClock }
        guard !summary.ended else { throw LeagueError.leagueEnded }
        guard summary.day < summary.days else { throw LeagueMarketError.lastDay }
        let target = summary.day + days
        let audit = actor.event(.leagueMarketAdvance, league: league.id, ["day": .number(min(target, summary.days))])
        let symbols = try await store.advance(leagueID: league.id, to: target, audit: audit).symbols
        await pricesStored(symbols)
        return try await market(of: league)
    }

    /// Moves every league on a clock to the day its clock shows (`league_market_day`),
    /// each once whichever server process gets there first: a chore.
    func advanceDue() async throws {
        for (leagueID, day) in try await store.due(at: now()) {
            let symbols = try await store.advance(leagueID: leagueID, to: day, audit: nil).symbols
            await pricesStored(symbols)
        }
    }

    // MARK: Scripted events

    /// The host schedules a shock: from league day `day` (one the league has not reached),
    /// `symbols` (the league's, as shown; nil: all) move by `changePercent`.
    func schedule(_ request: ScenarioEventRequest, in league: LeagueStore.LeagueRecord, by actor: Actor) async throws -> ScenarioEvent {
        guard league.ownerID == actor.userID else { throw LeagueError.ownerOnly(action: "script the league's events") }
        guard let summary = league.market else { throw LeagueMarketError.noMarket }
        guard request.day >= 2 else { throw InvalidInput("day must be a league day from 2 on: day 1 is the league's first prices.") }
        guard request.day <= summary.days else { throw LeagueMarketError.beyondWindow(days: summary.days) }
        let change = request.changePercent.value
        guard change >= -90, change <= 500, change.rounded(4, .plain) == change else {
            throw InvalidInput("changePercent must be from -90 to 500, with at most 4 decimals.")
        }
        let headline = request.headline.trimmingCharacters(in: .whitespacesAndNewlines)
        try TextInput.check(headline, field: "headline", length: 1...120)
        let body = request.body?.trimmingCharacters(in: .whitespacesAndNewlines)
        if let body { try TextInput.check(body, field: "body", length: 1...2000) }
        let symbols = try await stored(request.symbols, league: league.id)
        let audit = actor.event(.leagueEventCreate, league: league.id, ["day": .number(request.day)])
        guard let event = try await store.schedule(
            leagueID: league.id, day: request.day, symbols: symbols, changePercent: change, headline: headline, body: body, audit: audit
        ) else {
            throw LeagueMarketError.dayPassed(today: try await store.market(leagueID: league.id)?.0.day ?? summary.day)
        }
        return Self.answer(event)
    }

    /// The league's events: all of them for its host, those that have happened for members.
    func events(of league: LeagueStore.LeagueRecord, userID: Int) async throws -> [ScenarioEvent] {
        guard league.market != nil else { throw LeagueMarketError.noMarket }
        return try await store.events(leagueID: league.id, appliedOnly: league.ownerID != userID).map(Self.answer)
    }

    /// An event's symbols as stored: each must be one of the league's instruments.
    private func stored(_ shown: [String]?, league: Int) async throws -> [String]? {
        guard let shown else { return nil }
        guard (1...1000).contains(shown.count) else { throw InvalidInput("symbols must list 1 to 1000 symbols, or be null for all.") }
        let symbols = Array(Set(try shown.map { symbol in
            let normalized = Symbol.normalize(symbol)
            guard Symbol.isValid(normalized) else { throw InvalidInput("symbols holds \(symbol.debugDescription), which is not a symbol.") }
            return Symbol.stored(normalized, inLeague: league)
        })).sorted()
        let known = try await store.instruments(leagueID: league, among: symbols)
        if let unknown = symbols.first(where: { !known.contains($0) }) {
            throw InvalidInput("symbols holds \(Symbol.shown(unknown)), which this league's market does not trade.")
        }
        return symbols
    }

    private static func answer(_ event: LeagueMarketStore.ScenarioEventRecord) -> ScenarioEvent {
        ScenarioEvent(
            id: event.id, day: event.day, symbols: event.symbols?.map(Symbol.shown), changePercent: event.changePercent.plainText,
            headline: event.headline, body: event.body, applied: event.applied
        )
    }
}
