import Hummingbird
import Logging
import NIOCore
import Postgres

/// The one table from errors to what clients see. Features throw their own errors
/// (`TradingError`, `LeagueError`, ...) and `InvalidInput`, with no knowledge of HTTP;
/// database errors are mapped by SQLSTATE. Anything not listed is a logged `500`.
extension AppError {
    static func problem(for error: any Error, logger: Logger) -> AppError {
        switch error {
        case let error as AppError: return error
        case let error as HTTPError: return .from(error)
        case let error as InvalidInput:
            var problem = AppError(.unprocessableContent, code: "validation_failed", detail: error.detail)
            problem.line = error.line
            return problem
        case let error as ErrorAtLine:
            let inner = problem(for: error.error, logger: logger)
            var problem = AppError(inner.status, code: inner.code, detail: "Line \(error.line): \(inner.detail)")
            problem.line = error.line
            return problem
        case let error as AccountError: return problem(for: error)
        case let error as MarketError: return problem(for: error)
        case let error as TradingError: return problem(for: error, logger: logger)
        case let error as LeagueError: return problem(for: error)
        case let error as NotificationError:
            switch error {
            case .noSuchNotification: return .notFound("No such notification of yours.")
            }
        case let error as CorporateActionError:
            switch error {
            case .alreadyRecorded: return .conflict("This symbol already has an action of this kind on that day.")
            }
        case let error as PersonalDataError:
            switch error {
            case .adminAccount:
                return .forbidden("An admin's account is not erased by another admin; make it a player's first.")
            }
        case let error as LeagueMarketError:
            switch error {
            case .noMarket:
                return AppError(.notFound, code: "no_league_market", detail: "This league trades the real market: it has no market of its own.")
            case .onClock:
                return AppError(.conflict, code: "market_on_clock", detail: "This league's days pass on its clock (dayMinutes); its host does not advance them.")
            case .lastDay:
                return AppError(.conflict, code: "market_last_day", detail: "This league's market has reached the last day of its window.")
            case .dayPassed(let today):
                return AppError(.conflict, code: "event_day_passed", detail: "The league has reached day \(today); an event is scripted for a later day.")
            case .beyondWindow(let days):
                return AppError(.unprocessableContent, code: "validation_failed", detail: "day must be within the league's \(days) days.")
            }
        case let error as TeamError:
            switch error {
            case .noSuchTeam: return .notFound("No such team in this league.")
            case .notTeamLeague:
                return AppError(.conflict, code: "not_team_league", detail: "This league was not created with teams (\"teams\": true).")
            case .nameTaken: return .conflict("A team of this league already has that name.")
            }
        case let error as RosterError:
            switch error {
            case .notManaged:
                return AppError(.forbidden, code: "not_managed", detail: "Only a member of this league whose account you manage (a student of your class roster) can be changed so.")
            }
        case let error as AdminError:
            switch error {
            case .noSuchUser: return .notFound("No such user.")
            }
        case let error as ApiKeyError:
            switch error {
            case .tooManyKeys(let limit): return AppError(.conflict, code: "too_many_keys", detail: "A user has at most \(limit) API keys; revoke one first.")
            case .noSuchKey: return .notFound("No such API key of yours.")
            case .botsForbidden: return .botsForbidden
            }
        case let error as BotError:
            switch error {
            case .tooManyBots(let limit):
                return AppError(.conflict, code: "too_many_bots", detail: "A player has at most \(limit) bots; delete one first.")
            case .noSuchBot: return .notFound("No such bot of yours.")
            }
        case let error as FxError:
            switch error {
            case .noRate(let from, let to):
                return AppError(.notFound, code: "unknown_currency", detail: "No exchange rate from \(from) to \(to) is known for that day.")
            }
        case let error as PostgresError: return problem(for: error, logger: logger)
        case is DecodingError: return .badRequest("The request body is not valid JSON of the expected shape.")
        case is NIOTooManyBytesError: return .payloadTooLarge
        case is CancellationError: return .serviceUnavailable()
        default:
            logger.error("unexpected error", metadata: ["error": "\(String(reflecting: error))"])
            return .internalError
        }
    }

    private static func problem(for error: AccountError) -> AppError {
        switch error {
        case .usernameTaken: .conflict("That username is taken.")
        case .wrongCredentials: .unauthorized("Wrong username or password.")
        case .tooManyFailedLogins(let seconds):
            .rateLimited(retryAfter: seconds, "Too many failed password checks; try again later.")
        case .tooManyRegistrations(let seconds):
            .rateLimited(retryAfter: seconds, "Too many accounts were registered from this address; try again later.")
        case .wrongCurrentPassword: .forbidden("The current password is wrong.")
        case .wrongPassword: AppError(.forbidden, code: "wrong_password", detail: "The password is wrong; the account was not erased.")
        case .unknownUser: .unauthorized()
        }
    }

    private static func problem(for error: MarketError) -> AppError {
        switch error {
        case .unknownSymbol(let symbol): .unknownSymbol(symbol)
        case .noPrice(let symbol): .quoteUnavailable("\(symbol) has no price yet.")
        case .sourceUnavailable(let symbol):
            .quoteUnavailable("The price source for \(symbol) is unavailable and its last price is too old.")
        }
    }

    private static func problem(for error: TradingError, logger: Logger) -> AppError {
        switch error {
        case .noSuchPortfolio: return .notFound("No such portfolio of yours.")
        case .notATrader:
            return AppError(.forbidden, code: "not_a_trader", detail: "You watch this team's portfolio; its traders trade it. Ask the league's host to make you a trader.")
        case .insufficientFunds:
            return AppError(.unprocessableContent, code: "insufficient_funds", detail: "There is not enough cash for this purchase.")
        case .proceedsBelowFee:
            return AppError(.unprocessableContent, code: "insufficient_funds", detail: "The sale's proceeds would not cover its fee.")
        case .insufficientMargin:
            return AppError(.unprocessableContent, code: "insufficient_margin",
                            detail: "The portfolio's equity would not cover the margin its short positions need.")
        case .insufficientShares:
            return AppError(.unprocessableContent, code: "insufficient_shares", detail: "The portfolio does not hold that many shares.")
        case .leagueNotRunning: return .conflict("This league portfolio trades only while its league runs.")
        case .noteRequired:
            return AppError(.unprocessableContent, code: "note_required",
                            detail: "This league asks for a journal note on every order and trade: say why you are making it.")
        case .tradingFrozen:
            return AppError(.conflict, code: "trading_frozen",
                            detail: "The league's host has frozen trading; open orders wait and may still be cancelled.")
        case .insufficientCashToWithdraw:
            return AppError(.unprocessableContent, code: "insufficient_funds",
                            detail: "There is not enough cash free (not held for open orders) to withdraw that much.")
        case .tooManyPortfolios(let limit):
            return AppError(.conflict, code: "too_many_portfolios", detail: "A user has at most \(limit) practice portfolios; delete one first.")
        case .backdatingNotAllowed:
            return AppError(.unprocessableContent, code: "validation_failed",
                            detail: "Only a practice portfolio (portfolioId) takes back-dated trades (at).")
        case .outOfOrder:
            return AppError(.unprocessableContent, code: "out_of_order",
                            detail: "History is written in date order: nothing may be dated before the portfolio's latest trade or cash movement.")
        case .noClose(let symbol, let day):
            return AppError(.unprocessableContent, code: "no_close", detail: "\(symbol) has no close on \(day) (not a trading day for it?).")
        case .idempotencyKeyReused:
            return AppError(.unprocessableContent, code: "idempotency_key_reused",
                            detail: "This Idempotency-Key was used for a different request.")
        case .idempotencyKeyInFlight:
            return .conflict("A request with this Idempotency-Key is still being answered; retry it shortly.")
        case .incompleteRecord:
            logger.error("a trade statement reported success without its rows")
            return .internalError
        case .noSuchOrder: return .notFound("No such order of yours.")
        case .orderNotOpen:
            return AppError(.conflict, code: "order_not_open",
                            detail: "The order is no longer open; read it to see whether it filled, expired or was cancelled.")
        case .marketClosed:
            return AppError(.conflict, code: "market_closed",
                            detail: "The market is closed, and an ioc or fok order must fill at once.")
        case .orderTypeNotAllowed(let type):
            return AppError(.unprocessableContent, code: "validation_failed",
                            detail: "This league's rules do not allow \(type.rawValue) orders.")
        case .symbolNotAllowed(let symbol):
            return AppError(.unprocessableContent, code: "validation_failed", detail: "This league's rules do not allow trading \(symbol).")
        case .positionLimit(let percent):
            return AppError(.unprocessableContent, code: "position_limit",
                            detail: "One symbol may be at most \(percent)% of this portfolio's net worth.")
        case .priceTooLow(let shorting):
            return AppError(.unprocessableContent, code: "price_too_low",
                            detail: shorting
                                ? "This league's rules do not let you sell short a stock priced below its minimum for shorting (minShortPrice)."
                                : "This league's rules do not let you buy a stock priced below its minimum (minPrice).")
        case .volumeCap(let available):
            var problem = AppError(.unprocessableContent, code: "volume_cap",
                                   detail: "This league caps a portfolio's fills in a symbol at a share of the previous day's volume (volumeCapPercent); \(available) more shares can fill today.")
            problem.available = available
            return problem
        }
    }

    /// A league whose bot policy is `forbidden`: no bot joins, no API key trades its portfolios.
    static let botsForbidden = AppError(
        .forbidden, code: "bots_forbidden", detail: "This league forbids bots: no bot may join it and no API key may trade its portfolios."
    )

    private static func problem(for error: LeagueError) -> AppError {
        switch error {
        case .noSuchLeague: .notFound("No such league of yours.")
        case .noLeagueWithCode: .notFound("No league has that code.")
        case .bannedFromLeague:
            AppError(.forbidden, code: "banned_from_league", detail: "You were removed from this league and cannot rejoin.")
        case .alreadyMember: AppError(.conflict, code: "already_member", detail: "You are already a member of this league.")
        case .leagueEnded: .conflict("This league has ended.")
        case .leagueFull: AppError(.conflict, code: "league_full", detail: "This league is full.")
        case .ownerOnly(let action): .forbidden("Only the league's owner may \(action).")
        case .noSuchMember: .notFound("No such member.")
        case .ownerCannotKickThemself:
            AppError(.unprocessableContent, code: "validation_failed", detail: "The owner cannot kick themself; leave or delete the league.")
        case .noFreeJoinCode: .serviceUnavailable("Could not find a free join code; try again.")
        case .botsForbidden: .botsForbidden
        case .joinClosed: AppError(.conflict, code: "join_closed", detail: "This league takes no more members: its late-join window has closed.")
        case .noResetsLeft(let allowed):
            AppError(.conflict, code: "no_resets_left",
                     detail: allowed == 0 ? "This league does not let members reset their own portfolio."
                        : "You have used the \(allowed) reset\(allowed == 1 ? "" : "s") this league allows.")
        case .sharedLeague:
            AppError(.conflict, code: "shared_league",
                     detail: "In a shared league members play their personal portfolios, which no league controls; only an isolated league's portfolios can be frozen or reset.")
        case .notPlaying: AppError(.conflict, code: "not_playing", detail: "The host of this league does not play in it.")
        case .teamLeague:
            AppError(.conflict, code: "team_league", detail: "In a team league each team trades one portfolio; no member's portfolio is reset.")
        }
    }

    /// Database errors by SQLSTATE. Those a request can cause (a row that appeared or
    /// vanished meanwhile, a value the schema refuses) get their own answer, never a
    /// `500`; features catch the ones they expect first. Logs never carry the error's
    /// DETAIL, which can quote a whole row (`PostgresError.logDescription`).
    private static func problem(for error: PostgresError, logger: Logger) -> AppError {
        if error.isConnectionFailure || error.isTransient || error.code == .queryCanceled || error.code == .readOnlySQLTransaction {
            // Unreachable, serialization failure or deadlock still failing after the
            // retries, a statement that ran out of time (57014), or a write that reached a
            // server not (yet) taking writes (25006: a replica being promoted in a failover).
            logger.warning("database unavailable", metadata: ["error": "\(error.logDescription)"])
            return .serviceUnavailable()
        }
        switch error.code {
        case .characterNotInRepertoire:
            // Text PostgreSQL cannot store (a NUL character): the client's input, not our fault.
            return AppError(.unprocessableContent, code: "validation_failed", detail: "Text values may not contain NUL characters.")
        case .checkViolation, .notNullViolation:
            // A value the schema refuses that Swift's checks let through: name the field.
            logger.notice("value refused by the schema", metadata: ["error": "\(error)"])
            let field = error.column ?? error.constraint.map { fieldName(constraint: $0, table: error.table) } ?? "A value"
            return AppError(.unprocessableContent, code: "validation_failed", detail: "\(field) is not valid.")
        case .uniqueViolation:
            logger.notice("unexpected duplicate", metadata: ["error": "\(error)"])
            return .conflict("This conflicts with something that exists already.")
        case .foreignKeyViolation:
            logger.notice("reference to a missing row", metadata: ["error": "\(error)"])
            return .conflict("Something this request refers to was changed or removed meanwhile.")
        default:
            if error.kind == .encoding {
                return AppError(.unprocessableContent, code: "validation_failed", detail: "Text values may not contain NUL characters.")
            }
            switch error.code?.errorClass {
            case "22", "54":
                // A data exception (a value out of range, too long, malformed) or a
                // program limit (a value too large to index): caused by what was sent.
                logger.notice("value refused by the database", metadata: ["error": "\(error)"])
                return AppError(.unprocessableContent, code: "validation_failed", detail: "A value in the request is out of range or too large.")
            case "23":
                logger.notice("integrity rule refused the request", metadata: ["error": "\(error)"])
                return .conflict("This conflicts with something that exists already.")
            default:
                logger.error("database error", metadata: ["error": "\(error.logDescription)"])
                return .internalError
            }
        }
    }

    /// The field a check constraint guards, from PostgreSQL's default name
    /// `<table>_<column>_check` ("leagues_name_check" → "name").
    static func fieldName(constraint: String, table: String?) -> String {
        var name = Substring(constraint)
        if let table, name.hasPrefix(table + "_") { name = name.dropFirst(table.count + 1) }
        if name.hasSuffix("_check") { name = name.dropLast("_check".count) }
        return name.isEmpty ? "A value" : String(name)
    }
}
