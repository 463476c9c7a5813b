import Foundation

/// The history table and the advisory lock, on the one connection a migration run uses.
struct MigrationHistory {
    struct Record: Decodable {
        var version: Int64
        var name: String
        var checksum: String
        var appliedAt: Date
        var executionMs: Int64
    }

    let table: String
    let connection: Connection

    private var quotedTable: String { SQLIdentifier.quoted(qualified: table) }

    /// The advisory lock's two keys: "migr", and a stable number for the table's name.
    private var lockKeys: (Int32, Int32) {
        let digest = SHA256.hex(table.utf8)
        return (0x6D69_6772, Int32(UInt32(digest.prefix(8), radix: 16)! & 0x7FFF_FFFF))
    }

    func exists() async throws -> Bool {
        try await connection.query("SELECT to_regclass($1) IS NOT NULL", [quotedTable])[0].decode(Bool.self, at: 0)
    }

    func create() async throws {
        try await connection.execute(script: """
            CREATE TABLE IF NOT EXISTS \(quotedTable) (
                version bigint PRIMARY KEY,
                name text NOT NULL,
                checksum text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now(),
                execution_ms bigint NOT NULL,
                applied_by text NOT NULL DEFAULT current_user
            )
            """)
    }

    func records() async throws -> [Record] {
        guard try await exists() else { return [] }
        return try await connection.query("SELECT version, name, checksum, applied_at, execution_ms FROM \(quotedTable) ORDER BY version")
            .decode(Record.self)
    }

    func insert(_ migration: Migration, milliseconds: Int64, appliedBy: String? = nil, on connection: Connection) async throws {
        try await connection.query(
            "INSERT INTO \(quotedTable) (version, name, checksum, execution_ms, applied_by) VALUES ($1, $2, $3, $4, coalesce($5, current_user))",
            [migration.version, migration.name, migration.checksum, milliseconds, appliedBy])
    }

    func updateChecksum(of version: Int64, to checksum: String) async throws {
        try await connection.query("UPDATE \(quotedTable) SET checksum = $2 WHERE version = $1", [version, checksum])
    }

    func delete(_ version: Int64, on connection: Connection) async throws {
        try await connection.query("DELETE FROM \(quotedTable) WHERE version = $1", [version])
    }

    /// Takes the session lock that serializes migration runs, waiting up to `timeout`.
    func lock(timeout: Duration) async throws {
        let (classKey, objectKey) = lockKeys
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
    }

    func unlock() async throws {
        let (classKey, objectKey) = lockKeys
        try await connection.query("SELECT pg_advisory_unlock($1::int, $2::int)", [classKey, objectKey])
    }
}
