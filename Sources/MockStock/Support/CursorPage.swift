import Hummingbird

/// A page of history, newest first; `nextBefore` is the cursor for the next page (null
/// on the last one).
struct CursorPage<Item: Encodable & Sendable>: ResponseEncodable {
    let items: [Item]
    @NullEncoded var nextBefore: Int?

    init(items: [Item], nextBefore: Int?) {
        self.items = items
        _nextBefore = NullEncoded(wrappedValue: nextBefore)
    }

    /// A page from up to `limit + 1` rows read newest first (ids below the cursor): the
    /// extra row only tells that there is a next page.
    init<Rows: Collection>(rows: Rows, limit: Int, id: (Item) -> Int, transform: (Rows.Element) throws -> Item) rethrows {
        let items = try rows.prefix(limit).map(transform)
        self.init(items: items, nextBefore: rows.count > limit ? items.last.map(id) : nil)
    }

    /// How many rows to read for a page of `limit` items.
    static func rowsToRead(limit: Int) -> Int { limit + 1 }
}
