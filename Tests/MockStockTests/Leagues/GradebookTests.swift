import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MockStock
import Testing
import TestSupport

@Suite("Gradebook")
struct GradebookTests {
    @Test("the host downloads the league as CSV, one row per member in the league's order, with trades, notes and resets; others get 403")
    func gradebook() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let host = try await client.register("grade_host")
            let league = try await client.hostedLeague(#","ownerPlays":false,"resetsAllowed":1"#, token: host.token)
            let ann = try await client.register("grade_ann")
            let ben = try await client.register("grade_ben")
            // A name a spreadsheet would read as a formula.
            let cal = try await client.register("-grade_cal")
            for member in [ann, ben, cal] { #expect(try await client.join(league.code, token: member.token).status == .ok) }
            let anns = try #require(try await client.leaguePortfolio(league.id, token: ann.token))
            // Ann: two trades, one with a note, and a resting order with a note.
            _ = try await client.trade("buy", #"{"symbol":"AAPL","amount":10,"note":"Strong quarter","portfolioId":\#(anns)}"#, token: ann.token)
            _ = try await client.tradeOK("buy", "ONE", 5, token: ann.token, portfolioID: anns)
            _ = try await client.placeOrderOK(
                #"{"symbol":"AAPL","side":"sell","quantity":1,"type":"limit","limitPrice":"500","note":"Target","portfolioId":\#(anns)}"#, token: ann.token)
            // Ben: resets once; nothing traded.
            #expect(try await client.send(.post, "/api/leagues/\(league.id)/reset", body: "", token: ben.token).status == .ok)
            try await client.setPrice("AAPL", "160.00")

            let response = try await client.get("/api/leagues/\(league.id)/report.csv", token: host.token)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "text/csv; charset=utf-8")
            let lines = String(buffer: response.body).split(separator: "\r\n").map(String.init)
            #expect(lines.first == "rank,username,netWorth,returnPercent,sharpe,sortino,maxDrawdown,excessReturn,trades,notes,resets,lastTradeAt")
            #expect(lines.count == 4)
            // Ann: 10 AAPL bought at 150 now 160 (+100) and 5 ONE at 1: 10,100.00, +1 %.
            let annRow = lines[1].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            #expect(Array(annRow.prefix(4)) == ["1", "grade_ann", "10100.00", "1.00"], "\(lines[1])")
            #expect(Array(annRow[4...7]) == ["", "", "", ""], "no daily returns yet")
            #expect(Array(annRow[8...10]) == ["2", "2", "0"] && annRow[11].hasSuffix("Z"), "\(lines[1])")
            #expect(lines.contains { $0.hasPrefix("2,grade_ben,10000.00,0.00,,,,,0,0,1,") }, "\(lines)")
            #expect(lines.contains { $0.hasPrefix("2,'-grade_cal,10000.00,") }, "a leading - is quoted: \(lines)")

            #expect(try await client.get("/api/leagues/\(league.id)/report.csv", token: ann.token).status == .forbidden)
            #expect(try await client.get("/api/leagues/\(league.id)/report.csv", token: try await client.register("grade_x").token).status == .notFound)
        }
    }
}
