/// Work a ``ChangeFeed`` does on its own thread and connection, right after draining
/// announcements: re-reading the announced rows there costs no thread hop at all.
protocol ChangeFeedReader: AnyObject, Sendable {
    /// Re-reads what `changes` made stale, running statements with `query` — valid only
    /// during this call, on the feed's thread — once `visibility` is ensured (see ``ChangeVisibility``).
    func refresh(_ changes: [Change], using query: FeedQuery, visibility: ChangeVisibility)
}

/// The feed's reader, held weakly so the feed never keeps its consumer alive.
final class WeakChangeFeedReader: Sendable {
    private let reader = Locked<WeakBox?>(nil)
    private struct WeakBox { weak var value: (any ChangeFeedReader)? }

    func set(_ value: any ChangeFeedReader) { reader.withLock { $0 = WeakBox(value: value) } }
    var current: (any ChangeFeedReader)? { reader.withLock { $0?.value } }
}
