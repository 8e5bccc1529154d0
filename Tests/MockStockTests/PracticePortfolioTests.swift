import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MockStock
import Testing
import TestSupport

@Suite("Practice portfolios")
struct PracticePortfolioTests {
    @Test("created with a starting cash, currency and start day; renamed; deleted; never the personal portfolio; no achievements")
    func lifecycle() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("practiser").token
            let created = try await client.send(.post, "/api/portfolios",
                body: #"{"name":"  What if 2026  ","startingCash":"5000","currency":"eur","startedAt":"2026-01-05"}"#, token: token)
            #expect(created.status == .created, "\(String(buffer: created.body))")
            let practice = try JSONDecoder().decode(PortfolioSummaryBody.self, from: Data(buffer: created.body))
            #expect(practice.name == "What if 2026" && practice.cash == "5000.00" && practice.practice && practice.baseCurrency == "EUR")
            let all = try await client.decode([PortfolioSummaryBody].self, "/api/portfolios", token: token)
            #expect(all.map(\.practice) == [false, true] && all[0].cash == "10000.00")

            // Trading in it: the personal portfolio and achievements are untouched.
            try await client.setPrice("AAPL", "100")
            _ = try await client.tradeOK("buy", "AAPL", 10, token: token, portfolioID: practice.id)
            #expect(try await client.decode(ReservedPortfolioBody.self, "/api/portfolio", token: token).cash == "10000.00")
            let achievements = try await client.decode([AchievementBody].self, "/api/achievements", token: token)
            #expect(achievements.allSatisfy { $0.earnedAt == nil && $0.progress == 0 })

            // Its history starts on its start day, with its starting cash (values in euros need rates).
            #expect(try await CurrencyTests.load(client, "Date,USD\n2026-01-02,1.25\n").status == .ok)
            let history = try await client.decode(
                ValueHistoryBody.self, "/api/portfolios/\(practice.id)/history?to=2026-01-06", token: token)
            #expect(history.currency == "EUR")
            #expect(history.points.first == .init(date: "2026-01-05", cash: "4000.00", holdingsValue: "0.00", netWorth: "4000.00", netInflow: "4000.00"))

            let renamed = try await client.send(.patch, "/api/portfolios/\(practice.id)", body: #"{"name":"Replay"}"#, token: token)
            #expect(try JSONDecoder().decode(PortfolioSummaryBody.self, from: Data(buffer: renamed.body)).name == "Replay")
            let other = try await client.register("neighbour").token
            #expect(try await client.send(.patch, "/api/portfolios/\(practice.id)", body: #"{"name":"Mine"}"#, token: other).status == .notFound)
            #expect(try await client.delete("/api/portfolios/\(practice.id)", token: other).status == .notFound)
            #expect(try await client.delete("/api/portfolios/\(all[0].id)", token: token).status == .notFound)
            for (body, code) in [(#"{"startingCash":"1"}"#, "validation_failed"), (#"{"name":""}"#, "validation_failed"), (#"{"currency":"euro"}"#, "validation_failed")] {
                let refused = try await client.send(.patch, "/api/portfolios/\(practice.id)", body: body, token: token)
                #expect(try refused.status == .unprocessableContent && decodeProblem(refused).code == code, "\(body)")
            }
            // Its trades as CSV, oldest first, in the import format.
            _ = try await client.tradeOK("sell", "AAPL", 4, token: token, portfolioID: practice.id)
            let exported = try await client.get("/api/portfolios/\(practice.id)/export", token: token)
            #expect(exported.headers[.contentType] == "text/csv; charset=utf-8")
            let today = String(ISO8601DateFormatter().string(from: Date()).prefix(10))
            #expect(String(buffer: exported.body) == "date,symbol,side,quantity,price,fee\n\(today),AAPL,buy,10,100,0\n\(today),AAPL,sell,4,100,0\n")
            #expect(try await client.get("/api/portfolios/\(practice.id)/export", token: other).status == .notFound)

            #expect(try await client.delete("/api/portfolios/\(practice.id)", token: token).status == .noContent)
            #expect(try await client.decode([PortfolioSummaryBody].self, "/api/portfolios", token: token).count == 1)
        }
    }

    @Test("at most ten practice portfolios; bad ones are refused")
    func limits() async throws {
        try await TestApp.run { client in
            let token = try await client.register("collector").token
            for index in 1...10 {
                #expect(try await client.send(.post, "/api/portfolios", body: #"{"name":"P\#(index)"}"#, token: token).status == .created)
            }
            let eleventh = try await client.send(.post, "/api/portfolios", body: #"{"name":"P11"}"#, token: token)
            #expect(try eleventh.status == .conflict && decodeProblem(eleventh).code == "too_many_portfolios")
            let other = try await client.register("beginner").token
            for body in [#"{"name":""}"#, #"{"name":"x","startingCash":"0"}"#, #"{"name":"x","startingCash":"1.001"}"#,
                         #"{"name":"x","startedAt":"2999-01-01"}"#, #"{"name":"x","startedAt":"1900-01-01"}"#, #"{"name":"x","currency":"EU"}"#] {
                #expect(try await client.send(.post, "/api/portfolios", body: body, token: other).status == .unprocessableContent, "\(body)")
            }
        }
    }

    @Test("deposits and withdrawals: in date order, never more than the free cash")
    func cash() async throws {
        try await TestApp.run { client in
            let token = try await client.register("saver").token
            let created = try await client.send(.post, "/api/portfolios", body: #"{"name":"Savings","startingCash":"1000","startedAt":"2026-01-05"}"#, token: token)
            let id = try JSONDecoder().decode(PortfolioSummaryBody.self, from: Data(buffer: created.body)).id
            let deposit = try await client.send(.post, "/api/portfolios/\(id)/cash", body: #"{"amount":"250.50","at":"2026-01-10"}"#, token: token)
            #expect(deposit.status == .created, "\(String(buffer: deposit.body))")
            struct Movement: Decodable { let kind: String; let amount: String }
            #expect(try JSONDecoder().decode(Movement.self, from: Data(buffer: deposit.body)).kind == "deposit")
            for (body, status, code) in [
                (#"{"amount":"-2000"}"#, HTTPResponse.Status.unprocessableContent, "insufficient_funds"),
                (#"{"amount":"10","at":"2026-01-07"}"#, .unprocessableContent, "validation_failed"),
                (#"{"amount":"10","at":"2999-01-01"}"#, .unprocessableContent, "validation_failed"),
                (#"{"amount":"0"}"#, .unprocessableContent, "validation_failed"),
            ] {
                let refused = try await client.send(.post, "/api/portfolios/\(id)/cash", body: body, token: token)
                #expect(try refused.status == status && decodeProblem(refused).code == code, "\(body)")
            }
            let withdrawal = try await client.send(.post, "/api/portfolios/\(id)/cash", body: #"{"amount":"-50"}"#, token: token)
            #expect(withdrawal.status == .created)
            let portfolios = try await client.decode([PortfolioSummaryBody].self, "/api/portfolios", token: token)
            #expect(portfolios.first { $0.id == id }?.cash == "1200.50")
            let personal = portfolios.first { !$0.practice }!.id
            #expect(try await client.send(.post, "/api/portfolios/\(personal)/cash", body: #"{"amount":"5"}"#, token: token).status == .notFound)
        }
    }
}
