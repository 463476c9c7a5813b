/// What the library keeps in the database: the `live` schema, whose triggers announce every
/// change of the tables you enable. It ships with the library and is installed and upgraded
/// by it — your migrations only say which tables are live.
///
/// ```swift
/// try await LiveSchema.install(on: database)              // once per start is fine: idempotent
/// try await LiveSchema.enable("members", on: database)    // or, in a migration:
/// // SELECT live.enable_change_notifications('members');
/// ```
///
/// Installing takes a transaction-scoped advisory lock, so processes starting at once install
/// it once; it records ``version`` in `live.schema_version`. The one the address book's
/// migrations 0001–0005 carried is upgraded in the same transaction that re-creates the
/// triggers of every enabled table, so no statement goes unannounced; version 1's triggers are
/// this version's, so only the functions they call are made anew (no table is locked).
/// A schema installed by a newer library is left as it is: during a rolling upgrade the newer
/// processes install it, and announcements stay readable by the older ones (fields are only
/// ever added).
///
/// A table needs a primary key of integer, text or uuid columns, one or several; its changes
/// are announced by key, and a key must stay under 7,000 bytes as JSON (a longer one makes the
/// statement fail with an error saying so, rather than go unannounced).
public enum LiveSchema {
    /// The schema version this library installs: 2 fixes every function's `search_path`
    /// (version 1's ran with the caller's); 3 makes a statement's announcement with about half
    /// the work in its trigger. Every version's announcements are version 1's.
    public static let version = 3

    /// The advisory lock that serializes installs ("live" in ASCII, then the schema's number).
    static let lockKey: Int64 = 0x6C69_7665_0000_0001

    /// Installs or upgrades the `live` schema; whether it did anything (false when this
    /// version, or a newer one, is installed already — or an older one this role may not
    /// upgrade, not being the schema's owner: it keeps working, and ``unpinnedFunctions(on:)``
    /// names what its owner's install would bring up to date).
    @discardableResult
    public static func install(on database: Database) async throws -> Bool {
        try await database.transaction { connection in
            // Nothing here names the caller's objects: no function or operator of theirs is called.
            try await connection.query("SET LOCAL search_path = pg_catalog, pg_temp")
            try await connection.query("SELECT pg_advisory_xact_lock($1::int8)", [lockKey])
            // An older schema is upgraded by a role that may (its owner): for another, it stays
            // as it is — its triggers still announce — and this goes on, as before the upgrade.
            try await connection.execute(script: "SAVEPOINT live_install")
            let installed: Int?
            do {
                installed = try await installedVersion(connection)
            } catch let error as PostgresError where error.sqlState == "42501" {
                try await connection.execute(script: "ROLLBACK TO SAVEPOINT live_install")
                return false  // a schema this role may not even read (version 1 granted nothing): not its to upgrade
            }
            if let installed, installed >= version {
                // Functions another role made stay behind until it (or a superuser) installs.
                if try await !connection.query(unpinnedQuery).isEmpty { try await connection.execute(script: pinSQL) }
                return false
            }
            do {
                try await connection.execute(script: installSQL)
                // The address book's old migrations made other triggers; version 1's are this one's.
                if installed == nil { try await connection.query(reenableSQL) }
                try await connection.execute(script: remakeSQL + ";\n" + pinSQL)
                try await connection.query("INSERT INTO live.schema_version (version) VALUES ($1)", [version])
                return true
            } catch let error as PostgresError where installed != nil && error.sqlState == "42501" {
                try await connection.execute(script: "ROLLBACK TO SAVEPOINT live_install")
                return false
            }
        }
    }

    /// The installed schema's version; nil when none is (the address book's old migrations
    /// left an unversioned one).
    public static func installedVersion(on database: Database) async throws -> Int? {
        try await database.withConnection { try await installedVersion($0) }
    }

    private static func installedVersion(_ connection: Connection) async throws -> Int? {
        guard try await connection.query("SELECT pg_catalog.to_regclass('live.schema_version') IS NOT NULL")[0].decode(Bool.self, at: 0) else { return nil }
        return try await connection.query("SELECT max(version) FROM live.schema_version")[0].decode(Int?.self, at: 0)
    }

    /// Announces every change of `table` from now on (and of its partitions, if it is
    /// partitioned), installing the schema first if needed. `table` is spelled as SQL spells
    /// it: `members`, `crm.members`, `"Odd Name"`. Idempotent.
    /// - Throws: the server's error, one line — for a table that does not exist, has no
    ///   primary key, or has a key column of another type than integer, text or uuid.
    public static func enable(_ table: String, on database: Database) async throws {
        try await install(on: database)
        try await onTable(table, database) { connection, oid in
            let kind = try await connection.query("SELECT relkind::text FROM pg_class WHERE oid = $1::int8::oid", [oid])[0].decode(String.self, at: 0)
            if let error = PostgresError.notATable(TerminalText.name(table), relkind: kind) { throw error }
            try await connection.query("SELECT live.enable_change_notifications($1::int8::oid::regclass)", [oid])
        }
    }

    /// Stops announcing `table`'s changes. Live values over it stop following other processes.
    public static func disable(_ table: String, on database: Database) async throws {
        _ = try await onTable(table, database) { connection, oid in
            try await connection.query("SELECT live.disable_change_notifications($1::int8::oid::regclass)", [oid])
        }
    }

    /// Runs `body` in a transaction with the oid of the table `name` finds through the
    /// caller's `search_path` (the name is theirs), and from then on a `search_path` that calls
    /// no function or operator of theirs.
    static func onTable<T>(_ name: String, _ database: Database, _ body: (Connection, Int64) async throws -> T) async throws -> T {
        try await PostgresError.namingTable(name) {
            try await database.transaction { connection in
                try await body(connection, oidPinningSearchPath(of: name, connection).oid)
            }
        }
    }

    /// The oid of the table `name` finds through the session's `search_path`, and its name as
    /// that path spells it; from then on, the transaction's `search_path` is `pg_catalog, pg_temp`.
    static func oidPinningSearchPath(of name: String, _ connection: Connection) async throws -> (oid: Int64, spelled: String) {
        let found = try await connection.query("SELECT $1::regclass::oid::int8, $1::regclass::text", [name])[0]
        try await connection.query("SET LOCAL search_path = pg_catalog, pg_temp")
        return (try found.decode(Int64.self, at: 0), try found.decode(String.self, at: 1))
    }
}
