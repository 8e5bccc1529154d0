import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import MockStock
import Testing
import TestSupport

struct RiskBody: Decodable, Equatable {
    let from: String?
    let to: String?
    let days: Int
    let volatility: String?
    let sharpe: String?
    let sortino: String?
    let maxDrawdown: String?
    let beta: String?
    let excessReturn: String?
    let benchmark: String
}

/// A week of closes worked by hand. The portfolio puts all of 1,000 into 10 AAL at
/// Monday's 100, so its daily returns are AAL's: +10 %, −10 %, +6 %, −10 %
/// (100 → 110 → 99 → 104.94 → 94.446). MSFT, the benchmark: 100 → 105 → 100 → 102 → 97.
///
/// - mean(r) = −0.01; deviations 0.11, −0.09, 0.07, −0.09; squares sum to 0.0332;
///   sample variance 0.0332 / 3 = 0.011067; stdev 0.105198.
/// - volatility = 0.105198 × √252 (15.874508) = 1.669970.
/// - sharpe = −0.01 / 0.105198 × √252 = −1.509009.
/// - sortino: the downside squares are 0.01 and 0.01 over 4 days, mean 0.005, root
///   0.070711; −0.01 / 0.070711 × √252 = −2.244994.
/// - maxDrawdown: the index runs 1.1, 0.99, 1.0494, 0.94446; from the peak 1.1 to
///   0.94446 is (1.1 − 0.94446) / 1.1 = 0.141400.
/// - beta: MSFT's returns are 0.05, −0.047619, 0.02, −0.049020 (mean −0.006660);
///   cov(r, r_b) = 0.0085003 / 3 and var(r_b) = 0.0040291 / 3, so beta = 2.109737.
/// - excessReturn = (94.446 / 100 − 1) − (97 / 100 − 1) = −0.05554 + 0.03 = −0.025540.
enum RiskFixture {
    static let week = ["2018-01-08", "2018-01-09", "2018-01-10", "2018-01-11", "2018-01-12"]
    static let portfolio = ["100", "110", "99", "104.94", "94.446"]
    static let benchmark = ["100", "105", "100", "102", "97"]

    static var csv: String {
        var lines = ["symbol,date,open,high,low,close,volume,dividend,split"]
        for (index, day) in week.enumerated() {
            lines.append("AAL,\(day),\(portfolio[index]),\(portfolio[index]),\(portfolio[index]),\(portfolio[index]),100,0,1")
            lines.append("MSFT,\(day),\(benchmark[index]),\(benchmark[index]),\(benchmark[index]),\(benchmark[index]),100,0,1")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

@Suite("Risk figures")
struct RiskTests {
    @Test("the risk rules, by hand: volatility, Sharpe, Sortino, maximum drawdown and beta of a worked week")
    func rules() {
        let days = Array(RiskFixture.week.dropFirst())
        let r = [0.10, -0.10, 0.06, -0.10]
        let benchmark = Dictionary(uniqueKeysWithValues: zip(days, [0.05, -5.0 / 105, 0.02, -5.0 / 102]))
        let figures = Risk.figures(Array(zip(days, r)).map { (day: $0.0, r: $0.1) }, benchmark: benchmark)
        #expect(Risk.text(figures.volatility) == "1.669970")
        #expect(Risk.text(figures.sharpe) == "-1.509009")
        #expect(Risk.text(figures.sortino) == "-2.244994")
        #expect(Risk.text(figures.maxDrawdown) == "0.141400")
        #expect(Risk.text(figures.beta) == "2.109737")
        // Fewer than two returns: nothing; returns that never fall: no Sortino, no drawdown.
        #expect(Risk.figures([(day: "2018-01-09", r: 0.1)], benchmark: nil) == Risk.Figures())
        let rising = Risk.figures([(day: "a", r: 0.01), (day: "b", r: 0.02)], benchmark: nil)
        #expect(rising.sortino == nil && rising.maxDrawdown == 0 && rising.sharpe != nil)
        let flat = Risk.figures([(day: "a", r: 0), (day: "b", r: 0)], benchmark: ["a": 0.01, "b": 0.01])
        #expect(flat.sharpe == nil && flat.beta == nil && flat.volatility == 0)
    }

    @Test("a portfolio's risk over a range, against a symbol; null figures before there are two daily returns")
    func portfolioRisk() async throws {
        try await TestApp.run { client in
            let admin = try await client.seedMarket()
            #expect(try await client.send(.post, "/api/admin/prices", body: RiskFixture.csv, contentType: "text/csv", token: admin).status == .ok)
            let token = try await client.register("risk_taker").token
            let created = try await client.send(.post, "/api/portfolios", body: #"{"name":"Week","startingCash":"1000","startedAt":"2018-01-08"}"#, token: token)
            #expect(created.status == .created, "\(String(buffer: created.body))")
            let id = try JSONDecoder().decode(PortfolioSummaryBody.self, from: Data(buffer: created.body)).id
            let bought = try await client.trade("buy", #"{"symbol":"AAL","amount":10,"portfolioId":\#(id),"at":"2018-01-08"}"#, token: token)
            #expect(bought.status == .ok, "\(String(buffer: bought.body))")

            let risk = try await client.decode(RiskBody.self, "/api/portfolios/\(id)/risk?from=2018-01-08&to=2018-01-12&benchmark=msft", token: token)
            #expect(risk == RiskBody(from: "2018-01-08", to: "2018-01-12", days: 4, volatility: "1.669970", sharpe: "-1.509009",
                                     sortino: "-2.244994", maxDrawdown: "0.141400", beta: "2.109737", excessReturn: "-0.025540",
                                     benchmark: "MSFT"))
            let own = try await client.decode(RiskBody.self, "/api/portfolios/\(id)/risk?from=2018-01-08&to=2018-01-12&benchmark=AAL", token: token)
            #expect(own.beta == "1.000000" && own.excessReturn == "0.000000")
            let short = try await client.decode(RiskBody.self, "/api/portfolios/\(id)/risk?from=2018-01-08&to=2018-01-09", token: token)
            #expect(short.days == 1 && short.volatility == nil && short.sharpe == nil && short.maxDrawdown == nil && short.benchmark == "market")

            #expect(try await client.get("/api/portfolios/\(id)/risk?benchmark=NOPE", token: token).status == .notFound)
            #expect(try await client.get("/api/portfolios/\(id)/risk?from=2018-13-01", token: token).status == .unprocessableContent)
            #expect(try await client.get("/api/portfolios/\(id)/risk", token: try await client.register("risk_other").token).status == .notFound)
        }
    }
}
