import Foundation

/// Where prices come from. Every trade and valuation asks the configured provider; what
/// each one promises about freshness is in the README.
public protocol QuoteProvider: Sendable {
    /// Current quotes for upper-case symbols; symbols without a price are left out.
    /// Throws `AppError.quoteUnavailable` when no usable price can be had.
    func quotes(for symbols: [String]) async throws -> [String: PriceQuote]

    /// The last day of history clients may see (the replay day), or nil for all of it.
    func historyEnd() async throws -> String?
}

extension QuoteProvider {
    func historyEnd() async throws -> String? { nil }

    /// The quote for one known instrument: `quote_unavailable` when it has no price.
    func quote(for symbol: String) async throws -> PriceQuote {
        guard let quote = try await quotes(for: [symbol])[symbol] else {
            throw AppError.quoteUnavailable("\(symbol) has no price yet.")
        }
        return quote
    }
}

/// Prices kept in the database: the `quotes` table (set by admins, or by the simulated or
/// replayed market), falling back to each instrument's last daily close.
struct StoredQuoteProvider: QuoteProvider {
    let store: MarketStore
    /// Set when replaying history, which also hides the days after the replay day.
    var replay: ReplayMarket?

    func quotes(for symbols: [String]) async throws -> [String: PriceQuote] {
        try await store.prices(for: symbols)
    }

    func historyEnd() async throws -> String? {
        try await replay?.day(at: Date())
    }
}
