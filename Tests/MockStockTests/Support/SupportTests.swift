import Foundation
import Logging
@testable import MockStock
import Postgres
import Testing

@Suite("Shared helpers")
struct SupportTests {
    @Test("a ticker symbol is 1–12 upper-case letters, digits, '.' and '-', starting with a letter or digit (the instruments table's check)")
    func symbols() {
        for symbol in ["A", "AAPL", "BRK.B", "BF-B", "9988", "ABCDEFGHIJKL"] {
            #expect(Symbol.isValid(symbol), "\(symbol)")
        }
        for symbol in ["", "aapl", ".A", "-A", "ABCDEFGHIJKLM", "A B", "AÄ", "A_B", "A/B", "Ａ"] {
            #expect(!Symbol.isValid(symbol), "\(symbol)")
        }
        #expect(Symbol.normalize("  brk.b ") == "BRK.B")
    }

    @Test("white space at either end is trimmed as Foundation trims it, whether ASCII or not, and text without any is kept")
    func trimmingWhitespace() {
        for text in ["AAPL", "  brk.b ", "\tx\t", "\u{00A0}MSFT\u{2003}", " ", "", "é", " a b ", "\u{3000}日本\u{3000}", "x\n"] {
            #expect(text.trimmingWhitespace == text.trimmingCharacters(in: .whitespaces), "\(text.debugDescription)")
        }
        #expect("\u{00A0}msft ".trimmingWhitespace == "msft")
    }

    @Test("a request fingerprint is the SHA-256 of its text in lower-case hex (FIPS 180-2 test vectors), so a stored key matches across versions")
    func sha256Hex() {
        #expect("abc".sha256Hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect("".sha256Hex == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect("héllo\n".sha256Hex.count == 64)
        #expect([0x00, 0x0F, 0xA0, 0xFF].lowercaseHex == "000fa0ff")
    }

    @Test("the expiring cache forgets a value at its lifetime and stays within its capacity, dropping expired entries first")
    func expiringCache() {
        let clock = TestClock()
        let cache = ExpiringCache<String, Int>(lifetime: .seconds(10), capacity: 3, clock: clock.reader)
        cache.store(1, for: "a")
        clock.advance(by: .seconds(6))
        cache.store(2, for: "b")
        clock.advance(by: .seconds(1))
        cache.store(3, for: "c")
        #expect(cache.value(for: "a") == 1)
        clock.advance(by: .seconds(3))
        #expect(cache.value(for: "a") == nil, "expired at its lifetime")
        #expect(cache.value(for: "b") == 2)
        // Full: the expired "a" makes room, the fresh ones stay.
        cache.store(4, for: "d")
        #expect(cache.count == 3)
        #expect(cache.values(for: ["b", "c", "d"]) == ["b": 2, "c": 3, "d": 4])
        // Full with nothing expired: the oldest goes.
        clock.advance(by: .seconds(1))
        cache.store(5, for: "e")
        #expect(cache.count == 3)
        #expect(cache.value(for: "b") == nil)
        #expect(cache.values(for: ["c", "d", "e"]).count == 3)
    }

    @Test("a value read before a slow source answered expires counting from the read")
    func expiringCacheCountsFromTheRead() {
        let clock = TestClock()
        let cache = ExpiringCache<Int, String>(lifetime: .seconds(2), capacity: 10, clock: clock.reader)
        let read = cache.now
        clock.advance(by: .seconds(1))
        cache.store("slow", for: 1, at: read)
        clock.advance(by: .seconds(1))
        #expect(cache.value(for: 1) == nil)
    }

    @Test("a forgotten value is read afresh, and a read that began before the forgetting is not stored")
    func expiringCacheForgets() {
        let clock = TestClock()
        let cache = ExpiringCache<String, Int>(lifetime: .seconds(60), capacity: 10, clock: clock.reader)
        cache.store(1, for: "a")
        let before = cache.now
        clock.advance(by: .milliseconds(5))
        cache.forget(["a"])
        #expect(cache.value(for: "a") == nil)
        cache.store(1, for: "a", at: before)
        #expect(cache.value(for: "a") == nil, "read before the source changed")
        clock.advance(by: .milliseconds(5))
        cache.store(2, for: "a", at: cache.now)
        #expect(cache.value(for: "a") == 2)
        cache.store(3, for: "a", at: before)
        #expect(cache.value(for: "a") == 3, "once a newer read was stored, the key is an ordinary one again")
    }

    @Test("forgetting every key (the simulated market moved every price) drops them all, and no read that began before is stored")
    func expiringCacheForgetsAll() {
        let clock = TestClock()
        let cache = ExpiringCache<String, Int>(lifetime: .seconds(60), capacity: 10, clock: clock.reader)
        cache.store(["a": 1, "b": 2])
        let before = cache.now
        clock.advance(by: .milliseconds(5))
        cache.forgetAll()
        #expect(cache.values(for: ["a", "b"]).isEmpty)
        cache.store(["a": 1, "c": 3], at: before)
        #expect(cache.values(for: ["a", "c"]).isEmpty, "read before every source changed")
        clock.advance(by: .milliseconds(5))
        cache.store(["a": 4], at: cache.now)
        #expect(cache.value(for: "a") == 4)
    }

    @Test("a cursor page holds at most the limit and points past its last item only when more rows were read")
    func cursorPage() {
        struct Item: Encodable, Sendable { let id: Int }
        let full = CursorPage<Item>(rows: [9, 8, 7], limit: 2, id: \.id) { Item(id: $0) }
        #expect(full.items.map(\.id) == [9, 8])
        #expect(full.nextBefore == 8)
        let last = CursorPage<Item>(rows: [9, 8], limit: 2, id: \.id) { Item(id: $0) }
        #expect(last.nextBefore == nil)
    }

    @Test("database errors a request can cause map by SQLSTATE, never to 500", arguments: [
        (PostgresError.Code.uniqueViolation, 409, "conflict"),
        (PostgresError.Code.foreignKeyViolation, 409, "conflict"),
        (PostgresError.Code.serializationFailure, 503, "service_unavailable"),
        (PostgresError.Code.deadlockDetected, 503, "service_unavailable"),
        (PostgresError.Code.queryCanceled, 503, "service_unavailable"),
        (PostgresError.Code.characterNotInRepertoire, 422, "validation_failed"),
        (PostgresError.Code.checkViolation, 422, "validation_failed"),
        (PostgresError.Code.notNullViolation, 422, "validation_failed"),
        (PostgresError.Code.stringDataRightTruncation, 422, "validation_failed"),
        (PostgresError.Code.numericValueOutOfRange, 422, "validation_failed"),
        (PostgresError.Code("54000"), 422, "validation_failed"),
        (PostgresError.Code.exclusionViolation, 409, "conflict"),
        (PostgresError.Code.syntaxError, 500, "internal_error"),
    ])
    func sqlstateTable(_ sqlstate: PostgresError.Code, _ status: Int, _ code: String) {
        let error = PostgresError(kind: .server, code: sqlstate, message: "secret row (42, 'x')", detail: "Failing row contains (x)")
        let problem = AppError.problem(for: error, logger: Logger(label: "test"))
        #expect(problem.status.code == status)
        #expect(problem.code == code)
        #expect(!problem.detail.contains("secret") && !problem.detail.contains("Failing row"))
    }

    @Test("a check violation names the field its constraint guards")
    func checkViolationNamesTheField() {
        let error = PostgresError(
            kind: .server, code: .checkViolation, message: "new row violates check constraint",
            detail: "Failing row contains (1, $scrypt$secret)", constraint: "leagues_name_check", table: "leagues"
        )
        let problem = AppError.problem(for: error, logger: Logger(label: "test"))
        #expect(problem.detail == "name is not valid.")
        #expect(!error.logDescription.contains("scrypt"))
    }

    @Test("every feature error has its own answer, and none is a 500", arguments: [
        (TradingError.insufficientFunds as any Error, 422, "insufficient_funds"),
        (TradingError.idempotencyKeyReused, 422, "idempotency_key_reused"),
        (TradingError.noSuchPortfolio, 404, "not_found"),
        (LeagueError.leagueFull, 409, "league_full"),
        (LeagueError.bannedFromLeague, 403, "banned_from_league"),
        (AccountError.usernameTaken, 409, "conflict"),
        (AccountError.tooManyFailedLogins(retryAfterSeconds: 7), 429, "rate_limited"),
        (AccountError.tooManyRegistrations(retryAfterSeconds: 7), 429, "rate_limited"),
        (TradingError.proceedsBelowFee, 422, "insufficient_funds"),
        (MarketError.unknownSymbol("ZZZ"), 404, "unknown_symbol"),
        (MarketError.noPrice("ZZZ"), 503, "quote_unavailable"),
        (InvalidInput(line: 3, "bad"), 422, "validation_failed"),
        (TradingError.noSuchOrder, 404, "not_found"),
        (TradingError.orderNotOpen, 409, "order_not_open"),
        (TradingError.marketClosed, 409, "market_closed"),
        (TradingError.insufficientMargin, 422, "insufficient_margin"),
        (TradingError.positionLimit(25), 422, "position_limit"),
        (TradingError.priceTooLow(shorting: false), 422, "price_too_low"),
        (TradingError.priceTooLow(shorting: true), 422, "price_too_low"),
        (TradingError.orderTypeNotAllowed(.stop), 422, "validation_failed"),
        (TradingError.symbolNotAllowed("ZZZ"), 422, "validation_failed"),
        (CorporateActionError.alreadyRecorded, 409, "conflict"),
        (ApiKeyError.tooManyKeys(limit: 10), 409, "too_many_keys"),
        (ApiKeyError.noSuchKey, 404, "not_found"),
    ])
    func featureErrorTable(_ error: any Error, _ status: Int, _ code: String) {
        let problem = AppError.problem(for: error, logger: Logger(label: "test"))
        #expect(problem.status.code == status)
        #expect(problem.code == code)
    }
}

@Suite("Repeated tasks")
struct FailureStreakTests {
    @Test("a task failing every 20 ms is logged when it starts failing, every 10 s after, and once when it recovers")
    func quietStreak() {
        var streak = FailureStreak()
        let start = ContinuousClock.now
        var logged: [Int] = []
        for round in 0..<1_000 {  // 20 s of rounds 20 ms apart
            if let failures = streak.failed(at: start + .milliseconds(20 * round)) { logged.append(failures) }
        }
        #expect(logged == [1, 501])
        #expect(streak.succeeded() == 1_000)
        #expect(streak.failures == 0)
        // One failure alone is logged once, and its end is not.
        #expect(streak.failed(at: start + .seconds(30)) == 1)
        #expect(streak.succeeded() == nil)
    }
}
