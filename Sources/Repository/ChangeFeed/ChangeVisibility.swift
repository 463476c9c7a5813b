/// Whether new snapshots see the transactions of changes a feed hands on.
///
/// `LISTEN`'s notifications are delivered after their transaction commits, so they are visible
/// at once. A replication stream sends a commit once its WAL is flushed, a moment before the
/// transaction stops counting as in progress: a row read at once could still be the old one,
/// and its change lost. Rows the stream carried need no read, so they are applied at once; the
/// wait (one round trip) runs on the feed's thread before the first read that follows them, and
/// at the latest when the batch is handed on — reads elsewhere wait for it meanwhile (see
/// ``ReadSequence/holdReads()``).
///
/// Used by the feed's thread alone, for one batch.
final class ChangeVisibility {
    private var wait: (() throws -> Void)?
    /// Why the wait failed, once it did.
    private(set) var failure: (any Error)?

    /// Changes whose transactions are visible already (`LISTEN`).
    static var visible: ChangeVisibility { ChangeVisibility(nil) }

    /// Changes visible once `wait` returns (nil: already visible).
    init(_ wait: (() throws -> Void)?) {
        self.wait = wait
    }

    /// Whether the changes may not yet be visible (nobody waited yet).
    var isPending: Bool { wait != nil }

    /// Waits until the changes are visible, the first time; false once the wait failed.
    @discardableResult
    func ensure() -> Bool {
        if let wait {
            self.wait = nil
            do { try wait() } catch { failure = error }
        }
        return failure == nil
    }

    /// Runs a statement with `query` once the changes are visible.
    func run(_ sql: String, _ values: [SQLValue], with query: FeedQuery) throws -> QueryResult {
        if !ensure(), let failure { throw failure }
        return try query(sql, values)
    }
}
