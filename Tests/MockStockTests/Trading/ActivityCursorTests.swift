import Foundation
import MockStock
import Postgres
import Testing
import TestSupport

@Suite("Activity cursors")
struct ActivityCursorTests {
    @Test("an activity's page position is its time to the microsecond in UTC, its source and id (SQL activity_cursor over utc_text)")
    func activityCursor() async throws {
        try await TemporaryDatabase.with { database in
            try await TestApp.run(on: database) { _ in }
            try await database.withPool { pool in
                let row = try await pool.query(
                    """
                    SELECT activity_cursor('2026-03-02T09:30:00.123456-05:00', 2, 42),
                           utc_text('2026-03-02T09:30:00.123456-05:00', 0), utc_text('2026-03-02T09:30:00.123456-05:00', 3)
                    """
                ).decode((String, String, String).self)
                #expect(row[0].0 == "2026-03-02T14:30:00.123456Z~2~42")
                #expect(row[0].1 == "2026-03-02T14:30:00Z")
                #expect(row[0].2 == "2026-03-02T14:30:00.123Z")
            }
        }
    }
}
