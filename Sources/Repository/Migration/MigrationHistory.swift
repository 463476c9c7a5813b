import Foundation

/// The history table and the advisory lock, on the one connection a migration run uses.
struct MigrationHistory {
    struct Record {
        var version: MigrationVersion
        var name: String
        var checksum: String
        var appliedAt: Date
        var executionMs: Int64
    }

    private struct Row: Decodable {
        var version: String
        var name: String
        var checksum: String
        var appliedAt: Date
        var executionMs: Int64
    }

    let table: String
    let connection: Connection
    /// The table named with its schema as the server resolved it (see ``lock(timeout:)``).
    private var resolved: String?

    /// The history `table` (`name` or `schema.name`) on `connection`.
    /// - Throws: ``MigrationError`` when `table` names no table: empty, an empty part, or more
    ///   than a schema and a name.
    init(table: String, connection: Connection) throws {
        let parts = SQLIdentifier.parts(of: table)
        guard (1...2).contains(parts.count), parts.allSatisfy({ !$0.text.isEmpty && $0.text != "\"\"" }) else {
            throw MigrationError(.invalidRequest, "the history table \(TerminalText.quotedForMessage(table)) names no table; give name or schema.name")
        }
        self.table = table
        self.connection = connection
    }

    /// The table's name in SQL: with its schema once resolved, so that a migration changing the
    /// `search_path` (a `pg_dump` file sets it to `''`) does not move the history away.
    var quotedTable: String { resolved ?? SQLIdentifier.quoted(qualified: table) }

    /// This history with its table named by `resolution`'s schema — kept when the
    /// `search_path` has none.
    private func resolved(as resolution: (schema: String?, name: String)) -> MigrationHistory {
        guard let schema = resolution.schema else { return self }
        var history = self
        history.resolved = SQLIdentifier.quoted(schema) + "." + SQLIdentifier.quoted(resolution.name)
        return history
    }

    /// The schema (nil: the `search_path` has none) and name of the table `table` finds now, or,
    /// if there is none, of the table `CREATE TABLE` would make.
    private func resolution() async throws -> (schema: String?, name: String) {
        let row = try await connection.query("""
            SELECT coalesce(n.nspname, CASE WHEN cardinality(p) > 1 THEN p[cardinality(p) - 1] ELSE current_schema() END),
                   coalesce(c.relname, p[cardinality(p)])
            FROM parse_ident($1) AS p LEFT JOIN pg_class c ON c.oid = to_regclass($1) LEFT JOIN pg_namespace n ON n.oid = c.relnamespace
            """, [quotedTable])[0]
        return (try row.decode(String?.self, at: 0), try row.decode(String.self, at: 1))
    }

    /// The advisory lock's two keys: "migr", and a stable number for the table's own name,
    /// whatever its schema — so that runs take one lock whichever history table of that name
    /// their `search_path` finds, or would make (roles whose `search_path` leads with a schema
    /// of their own, each run on a fresh database, would otherwise lock apart and both apply
    /// every migration). Histories of one name in two schemas are serialized too: harmless.
    private static func lockKeys(name: String) -> (Int32, Int32) {
        let digest = SHA256.hex(("." + name).utf8)
        return (0x6D69_6772, Int32(UInt32(digest.prefix(8), radix: 16)! & 0x7FFF_FFFF))
    }

    /// This table and the other tools' tables in sight.
    func tables() async throws -> HistoryTables {
        try await HistoryTables.inspect(own: table, on: connection)
    }

    /// Creates the table if it does not exist, its versions stored as `text` when `dotted`
    /// versions (Flyway's `2.1`) must fit, else as `bigint`.
    func create(dotted: Bool, on connection: Connection? = nil) async throws {
        try await (connection ?? self.connection).execute(script: """
            CREATE TABLE IF NOT EXISTS \(quotedTable) (
                version \(dotted ? "text" : "bigint") PRIMARY KEY,
                name text NOT NULL,
                checksum text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now(),
                execution_ms bigint NOT NULL,
                applied_by text NOT NULL DEFAULT current_user
            )
            """)
    }

    /// The applied migrations, in version order.
    /// - Throws: ``MigrationError`` when the table is another tool's or of an unknown shape, or
    ///   when it does not exist and another tool's table does.
    func records() async throws -> [Record] {
        let tables = try await tables()
        try tables.requireOwn()
        guard tables.own != nil else { return [] }
        return try await connection.query("SELECT version::text AS version, name, checksum, applied_at, execution_ms FROM \(quotedTable)")
            .decode(Row.self)
            .map { row in
                guard let version = MigrationVersion(row.version) else {
                    throw MigrationError(.foreignHistory, "\(table) records \(TerminalText.escaped(row.version, limit: 60)) as a version, which is not one (digits, with dots between them)")
                }
                return Record(version: version, name: row.name, checksum: row.checksum, appliedAt: row.appliedAt, executionMs: row.executionMs)
            }
            .sorted { $0.version < $1.version }
    }

    /// Refuses dotted `versions` when the table stores versions as `bigint`.
    func requireRoom(for versions: [MigrationVersion]) async throws {
        guard let dotted = versions.first(where: { $0.integer == nil }),
              case .own(let type)? = try await tables().own?.shape, type == "bigint" else { return }
        throw MigrationError(.invalidRequest, "\(table) stores versions as bigint, which cannot hold version \(dotted); change its column first: ALTER TABLE \(quotedTable) ALTER COLUMN version TYPE text")
    }

    func insert(_ migration: Migration, milliseconds: Int64, appliedBy: String? = nil, appliedAt: String? = nil, on connection: Connection) async throws {
        try await connection.query(
            """
            INSERT INTO \(quotedTable) (version, name, checksum, execution_ms, applied_by, applied_at)
            VALUES ($1, $2, $3, $4, coalesce($5, current_user), coalesce($6::timestamptz, now()))
            """,
            [migration.version, migration.name, migration.checksum, milliseconds, appliedBy, appliedAt])
    }

    func updateChecksum(of version: MigrationVersion, to checksum: String) async throws {
        try await connection.query("UPDATE \(quotedTable) SET checksum = $2 WHERE version = $1", [version, checksum])
    }

    func delete(_ version: MigrationVersion, on connection: Connection) async throws {
        try await connection.query("DELETE FROM \(quotedTable) WHERE version = $1", [version])
    }

    /// Takes the session lock that serializes migration runs on history tables of this name,
    /// waiting up to `timeout`; returns its keys, for ``unlock(_:)`` (a migration may change the
    /// `search_path` meanwhile), and this history named by its table's schema, resolved once
    /// the lock is held (another run may have made the table meanwhile).
    func lock(timeout: Duration) async throws -> (keys: (Int32, Int32), history: MigrationHistory) {
        let keys = Self.lockKeys(name: try await resolution().name)
        let (classKey, objectKey) = keys
        let deadline = ContinuousClock.now + timeout
        while try await !connection.query("SELECT pg_try_advisory_lock($1::int, $2::int)", [classKey, objectKey])[0].decode(Bool.self, at: 0) {
            guard ContinuousClock.now < deadline else {
                let holder = try await connection.query(
                    """
                    SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = $1::int::oid
                    AND objid = $2::int::oid AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                    """,
                    [classKey, objectKey]).first.map { try $0.decode(Int32.self, at: 0) }
                throw MigrationError(.lockTimeout, "another migration run\(holder.map { " (server process \($0))" } ?? "") has held the lock on \(table) for more than \(timeout); try again once it has finished")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return (keys, resolved(as: try await resolution()))
    }

    func unlock(_ keys: (Int32, Int32)) async throws {
        let (classKey, objectKey) = keys
        try await connection.query("SELECT pg_advisory_unlock($1::int, $2::int)", [classKey, objectKey])
    }
}
