import Logging

/// Receives `NOTIFY` messages on a dedicated connection of its own (never a pooled one, so
/// a lease can neither take it nor miss them), driven by the pool's I/O thread like every
/// other connection. When the connection breaks — a database restart, a terminated
/// backend — it opens a new one, listens again and says so, because notifications sent
/// in between are lost and whoever relies on them must catch up.
public final class PostgresListener: Sendable {
    /// What the listener tells its handler, in order.
    public enum Event: Sendable, Equatable {
        /// Listening on every channel; `afterGap` when a broken connection may have lost
        /// notifications since the last `listening`.
        case listening(afterGap: Bool)
        case notification(channel: String, payload: String)
    }

    let pool: PostgresConnectionPool
    let channels: [String]
    let logger: Logger
    /// How long one wait lasts before the listener checks whether it should stop.
    let wait: Duration
    let retryDelay: Duration

    /// `channels` are identifiers (letters, digits, underscores), since `LISTEN` takes no parameters.
    public init(
        pool: PostgresConnectionPool, channels: [String], logger: Logger,
        wait: Duration = .seconds(1), retryDelay: Duration = .seconds(1)
    ) {
        precondition(channels.allSatisfy(Self.isIdentifier), "channel names must be plain identifiers")
        self.pool = pool
        self.channels = channels
        self.logger = logger
        self.wait = wait
        self.retryDelay = retryDelay
    }

    /// Listens until the task is cancelled or the pool closes, telling `handle` each event.
    public func run(_ handle: @Sendable (Event) async -> Void) async {
        var broken = false
        while !Task.isCancelled {
            let connection = PostgresConnection(configuration: pool.configuration)
            do {
                for channel in channels {
                    _ = try await pool.loop.perform(.script("LISTEN \(channel)"), on: connection)
                }
                await handle(.listening(afterGap: broken))
                while !Task.isCancelled {
                    let rows = try await pool.loop.perform(.awaitNotifications(deadline: .now + wait), on: connection)
                    for row in rows {
                        await handle(.notification(
                            channel: try row.decode(String.self, column: 0), payload: try row.decode(String.self, column: 1)
                        ))
                    }
                }
                _ = try? await pool.loop.perform(.close, on: connection)
                return
            } catch let error as PostgresError where error.kind == .poolClosed {
                return
            } catch {
                broken = true
                logger.warning("listening for notifications failed; listening again", metadata: ["error": "\(error)"])
                _ = try? await pool.loop.perform(.close, on: connection)
                try? await Task.sleep(for: retryDelay)
            }
        }
    }

    private static func isIdentifier(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { $0 == UInt8(ascii: "_") || ($0 >= 48 && $0 <= 57) || ($0 | 0x20 >= 97 && $0 | 0x20 <= 122) }
    }
}
