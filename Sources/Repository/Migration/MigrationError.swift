/// A migration run that could not go ahead, or a migration that failed.
public struct MigrationError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, broadly: one of the kinds below.
    ///
    /// A struct rather than an enum, so that a kind added in a later version is not a source
    /// break: compare with `==`, or `switch` over the kinds with a `default:`.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Name: String, Sendable, Hashable {
            case invalidFile, duplicateVersion, failed, outOfOrder, drift, irreversible, lockTimeout, foreignHistory, invalidRequest
        }

        private let name: Name
        private init(_ name: Name) { self.name = name }

        /// A file is misnamed or its sections are malformed.
        public static let invalidFile = Kind(.invalidFile)
        /// Two migrations share a version.
        public static let duplicateVersion = Kind(.duplicateVersion)
        /// A migration's SQL failed; the database is as it was before that migration.
        public static let failed = Kind(.failed)
        /// Pending migrations are older than the newest applied one.
        public static let outOfOrder = Kind(.outOfOrder)
        /// An applied migration's file changed, or is gone.
        public static let drift = Kind(.drift)
        /// A rollback needs a down section that a migration does not have.
        public static let irreversible = Kind(.irreversible)
        /// Another run held the migration lock for longer than the timeout.
        public static let lockTimeout = Kind(.lockTimeout)
        /// The history table is another tool's (take it over with ``Migrator/adopt(_:acceptingEditedFiles:)``), is
        /// dirty, or has a shape this tool does not know.
        public static let foreignHistory = Kind(.foreignHistory)
        /// The request does not fit the database's state (e.g. baseline of a migrated database).
        public static let invalidRequest = Kind(.invalidRequest)

        /// The kind's name, as written above (`lockTimeout`).
        public var description: String { name.rawValue }
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
