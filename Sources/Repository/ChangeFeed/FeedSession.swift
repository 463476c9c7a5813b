/// One connection's worth of a change feed — `LISTEN` on a channel, or a logical replication
/// stream: the socket the feed's thread waits on, and what the thread does when it is readable
/// or silent. Made and used by that thread alone; the loop around it (``FeedLoop``) is the same
/// for every source.
protocol FeedSession: AnyObject {
    /// The socket to wait on.
    var socket: Int32 { get }
    /// What libpq last said went wrong, password removed.
    var errorMessage: String { get }
    /// Whether this session took up the stream where the one before it stopped, so that no
    /// change was missed in between.
    var resumed: Bool { get }
    /// Whether the server ended the session by refusing it — an error of its own, not a lost
    /// connection (a terminated backend, a restart): the next session may meet the same
    /// refusal, so it is paced (see ``ReconnectPacing``).
    var wasRefused: Bool { get }
    /// Reads what arrived, handing each batch of changes on to `output`; false when the
    /// connection is lost.
    func receive(_ output: FeedOutput) -> Bool
    /// Nothing arrived for a while: checks the connection (false: lost), and may hand on changes.
    func idle(_ output: FeedOutput) -> Bool
    /// The feed stops: releases what the server keeps for this session.
    func finish()
}

/// Where a session hands what it received.
struct FeedOutput {
    /// Changes, with the connection the reader may re-read them on during this call, and
    /// when their transactions are visible to reads.
    let changes: ([Change], FeedQuery, ChangeVisibility) -> Void
    /// A notification that announced nothing valid.
    let ignored: (_ payload: String, _ reason: String) -> Void
}
