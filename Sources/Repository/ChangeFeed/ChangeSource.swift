/// Where a change feed learns of committed changes.
///
/// Both announce the same thing — table, operation, key, version — and the rows are read again
/// either way; nothing above the feed knows which one runs.
public enum ChangeSource: Sendable, Hashable {
    /// `LISTEN` on `channel`, where the triggers `LiveSchema.enable` installs announce each
    /// statement's changed keys. The default: it needs nothing of the server's configuration.
    case notifications(channel: String = ChangeFeed.defaultChannel)
    /// PostgreSQL's logical replication: a slot decoding, with `pgoutput`, the tables of
    /// `publication` (``LiveSchema/publish(_:on:publication:)`` adds a table; no triggers).
    /// Needs `wal_level = logical` (``LocalServer`` sets it) and a role with the `REPLICATION`
    /// attribute; the publication is made, empty, when there is none.
    ///
    /// After an outage the feed resumes its slot where it stopped: the changes committed
    /// meanwhile arrive, and nothing is re-read. The slot is dropped when the feed stops; one
    /// left by a process that died is dropped by any process following a publication once it
    /// holds back more than `abandonAfter` bytes of WAL (set `max_slot_wal_keep_size` on the
    /// server too, for when no such process runs). A feed whose slot was dropped starts anew and
    /// re-reads everything.
    case logicalReplication(publication: String = ChangeFeed.defaultPublication, abandonAfter: Int = 1 << 30)

    /// Notifications on the default channel.
    public static let notifications = ChangeSource.notifications()
    /// Logical replication of the default publication.
    public static let logicalReplication = ChangeSource.logicalReplication()
}
