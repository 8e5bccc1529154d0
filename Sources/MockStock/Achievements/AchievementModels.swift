import Foundation
import Hummingbird

/// An achievement of the catalog with the caller's progress towards it.
struct Achievement: ResponseEncodable, Sendable {
    let code: String
    let name: String
    let description: String
    let reward: String
    @NullEncoded var earnedAt: Date?
    /// How far along the caller is: `progress` of `target` (equal once earned).
    let progress: Int
    let target: Int
}
