import Foundation
import Hummingbird

/// A notification as clients see it.
struct Notification: ResponseEncodable, Sendable {
    let id: Int
    let title: String
    let body: String
    let createdAt: Date
    @NullEncoded var readAt: Date?
    /// What it is about where a client may act on it (`margin_call`, `liquidated`); null otherwise.
    @NullEncoded var kind: String? = nil
}

/// How many notifications a "mark all read" marked: those that were unread.
struct NotificationsMarked: ResponseEncodable, Sendable {
    let marked: Int
}

/// What notification rules refuse.
enum NotificationError: Error, Equatable {
    /// Not a notification, or someone else's.
    case noSuchNotification
}
