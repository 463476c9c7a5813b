/// A migration run that could not go ahead, or a migration that failed.
public struct MigrationError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, broadly.
    public enum Kind: Sendable, Hashable {
        /// A file is misnamed or its sections are malformed.
        case invalidFile
        /// Two migrations share a version.
        case duplicateVersion
        /// A migration's SQL failed; the database is as it was before that migration.
        case failed
        /// Pending migrations are older than the newest applied one.
        case outOfOrder
        /// An applied migration's file changed, or is gone.
        case drift
        /// A rollback needs a down section that a migration does not have.
        case irreversible
        /// Another run held the migration lock for longer than the timeout.
        case lockTimeout
        /// The history table is another tool's (take it over with ``Migrator/adopt(_:)``), is
        /// dirty, or has a shape this tool does not know.
        case foreignHistory
        /// The request does not fit the database's state (e.g. baseline of a migrated database).
        case invalidRequest
    }

    /// What went wrong, broadly.
    public let kind: Kind
    /// A sentence saying what went wrong and where.
    public let message: String
    /// The server's error, when a statement failed.
    public let underlying: PostgresError?

    init(_ kind: Kind, _ message: String, underlying: PostgresError? = nil) {
        self.kind = kind
        self.message = message
        self.underlying = underlying
    }

    /// The message.
    public var description: String { message }
}
