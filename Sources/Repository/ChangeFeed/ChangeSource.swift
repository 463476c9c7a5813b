/// Where a change feed learns of committed changes.
///
/// Both announce the same thing — table, operation, key, version — and the rows are read again
/// either way; nothing above the feed knows which one runs.
public enum ChangeSource: Sendable, Hashable {
    /// `LISTEN` on `channel`, where the triggers `LiveSchema.enable` installs announce each
    /// statement's changed keys. The default: it needs nothing of the server's configuration.
    case notifications(channel: String = ChangeFeed.defaultChannel)
    /// PostgreSQL's logical replication: a temporary slot decoding, with `pgoutput`, the tables
    /// of `publication` (``LiveSchema/publish(_:on:publication:)`` adds a table; no triggers).
    /// Needs `wal_level = logical` (``LocalServer`` sets it) and a role with the `REPLICATION`
    /// attribute; the publication is made, empty, when there is none. A temporary slot is
    /// dropped by the server when its connection ends, so a process that dies never holds WAL
    /// back; after an outage, everything is re-read, as with notifications.
    case logicalReplication(publication: String = ChangeFeed.defaultPublication)

    /// Notifications on the default channel.
    public static let notifications = ChangeSource.notifications()
    /// Logical replication of the default publication.
    public static let logicalReplication = ChangeSource.logicalReplication()
}
