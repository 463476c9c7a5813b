/// One connection's worth of a change feed — `LISTEN` on a channel, or a logical replication
/// stream: the socket the feed's thread waits on, and what the thread does when it is readable
/// or silent. Made and used by that thread alone; the loop around it (``FeedLoop``) is the same
/// for every source.
protocol FeedSession: AnyObject {
    /// The socket to wait on.
    var socket: Int32 { get }
    /// What libpq last said went wrong, password removed.
    var errorMessage: String { get }
    /// Reads what arrived, handing each batch of changes on to `output`; false when the
    /// connection is lost.
    func receive(_ output: FeedOutput) -> Bool
    /// Nothing arrived for a while: checks the connection (false: lost), and may hand on changes.
    func idle(_ output: FeedOutput) -> Bool
}

/// Where a session hands what it received.
struct FeedOutput {
    /// Changes, with the connection the reader may re-read them on during this call.
    let changes: ([Change], FeedQuery) -> Void
    /// A notification that announced nothing valid.
    let ignored: (_ payload: String, _ reason: String) -> Void
}
