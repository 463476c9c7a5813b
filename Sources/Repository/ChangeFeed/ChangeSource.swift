/// Where a change feed learns of committed changes.
///
/// Both announce the same thing — table, operation, key, version — and nothing above the feed
/// knows which one runs. Logical replication also delivers inserted and updated rows, which live
/// values take without reading them again when they can tell the row is newer than theirs.
public enum ChangeSource: Sendable, Hashable {
    /// `LISTEN` on `channel`, where the triggers `LiveSchema.enable` installs announce each
    /// statement's changed keys. The default: it needs nothing of the server's configuration.
    case notifications(channel: String = ChangeFeed.defaultChannel)
    /// PostgreSQL's logical replication: a slot decoding, with `pgoutput`, the tables of
    /// `publication` (``LiveSchema/publish(_:on:publication:)`` adds a table; no triggers on its writes).
    /// Needs `wal_level = logical` (``LocalServer`` sets it) and a role with the `REPLICATION`
    /// attribute; the publication is made, empty, when there is none.
    ///
    /// Inserted and updated rows arrive with their values (in binary form): a live value holding
    /// the version of the row the stream delivered before takes the next one as it comes, with
    /// no read; any other is read, as with notifications.
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
