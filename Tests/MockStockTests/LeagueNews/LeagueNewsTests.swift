import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MockStock
import Testing
import TestSupport

struct LeagueNewsBody: Decodable {
    let id: Int
    let title: String
    let body: String
    let createdAt: String
}

struct LeagueNewsPageBody: Decodable {
    let items: [LeagueNewsBody]
    let nextBefore: Int?
}

@Suite("League news")
struct LeagueNewsTests {
    @Test("the host posts news; every member is notified and reads it, newest first; others may not post or read")
    func news() async throws {
        try await TestApp.run { client in
            let host = try await client.register("news_host")
            let league = try await client.hostedLeague(#","ownerPlays":false"#, token: host.token)
            let students = [try await client.register("news_a"), try await client.register("news_b")]
            for student in students { #expect(try await client.join(league.code, token: student.token).status == .ok) }
            let path = "/api/leagues/\(league.id)/news"

            let posted = try await client.send(.post, path, body: #"{"title":" Quiz on Friday ","body":"Bring your journal.\nGood luck!"}"#, token: host.token)
            #expect(posted.status == .created, "\(String(buffer: posted.body))")
            let news = try JSONDecoder().decode(LeagueNewsBody.self, from: Data(buffer: posted.body))
            #expect(news.title == "Quiz on Friday" && news.body == "Bring your journal.\nGood luck!")
            _ = try await client.send(.post, path, body: #"{"title":"Markets closed Thursday","body":"No trading."}"#, token: host.token)
            for student in students {
                let titles = try await client.notificationTitles(token: student.token)
                #expect(titles.filter { $0.hasSuffix("Quiz on Friday") }.count == 1)
                let page = try await client.decode(LeagueNewsPageBody.self, path, token: student.token)
                #expect(page.items.map(\.title) == ["Markets closed Thursday", "Quiz on Friday"])
            }
            let first = try await client.decode(LeagueNewsPageBody.self, "\(path)?limit=1", token: host.token)
            #expect(first.items.count == 1 && first.nextBefore != nil)

            #expect(try await client.send(.post, path, body: #"{"title":"Mine","body":"x"}"#, token: students[0].token).status == .forbidden)
            #expect(try await client.get(path, token: try await client.register("news_stranger").token).status == .notFound)
            for refused in [#"{"title":"","body":"x"}"#, #"{"title":"x","body":"  "}"#, #"{"title":"a\u0007","body":"x"}"#,
                            #"{"title":"\#(String(repeating: "t", count: 121))","body":"x"}"#] {
                let response = try await client.send(.post, path, body: refused, token: host.token)
                #expect(response.status == .unprocessableContent, "\(refused)")
            }
            #expect(try await client.decode(LeagueNewsPageBody.self, path, token: host.token).items.count == 2)
        }
    }
}
