import Foundation

/// What another migration tool's history table says is applied.
struct ForeignHistory {
    let tool: MigrationTool
    let table: String
    /// Versions recorded one by one, each with when it was applied (as `timestamptz` text)
    /// when the tool records that.
    var applied: [MigrationVersion: String?] = [:]
    /// Every version at or below this one counts as applied: golang-migrate's current version,
    /// Flyway's baseline.
    var through: MigrationVersion?
    /// The checksum the tool recorded of each applied version's file, where it records one
    /// (sqlx, Flyway).
    var checksums: [MigrationVersion: ForeignChecksum] = [:]

    /// Reads `table`, a table of `tool`'s shape.
    /// - Throws: ``MigrationError`` when the tool left it dirty (a migration that failed part
    ///   way), naming the version, or when it records something that is not a version.
    init(_ tool: MigrationTool, table: String, on connection: Connection) async throws {
        self.tool = tool
        self.table = table
        let quoted = SQLIdentifier.quoted(qualified: table)
        switch tool {
        case .dbmate:
            for row in try await connection.query("SELECT version::text FROM \(quoted)") {
                applied[try version(row.decode(String.self, at: 0))] = .some(nil)
            }
        case .golangMigrate:
            let rows = try await connection.query("SELECT version::text, dirty FROM \(quoted) ORDER BY version DESC")
            guard let row = rows.first else { return }
            // -1 is golang-migrate's "no version": nothing applied — or, dirty, a migration
            // down to nothing that failed part way.
            if try row.decode(String.self, at: 0) == "-1" {
                guard try row.decode(Bool.self, at: 1) else { return }
                throw MigrationError(.foreignHistory, "golang-migrate's \(table) is dirty with no version (-1): a migration down to none failed part way; "
                                     + "repair the database by hand, clear the flag (golang-migrate's `force`), then adopt")
            }
            let version = try version(row.decode(String.self, at: 0))
            // golang-migrate keeps one row; a dirty one below it (left by hand) is refused too.
            if let dirty = try rows.first(where: { try $0.decode(Bool.self, at: 1) }) {
                let at = try dirty.decode(String.self, at: 0)
                throw MigrationError(.foreignHistory, "golang-migrate's \(table) is dirty at version \(TerminalText.escaped(at, limit: 40)): that migration failed part way; "
                                     + "repair the database by hand, clear the flag (golang-migrate's `force \(version)`), then adopt")
            }
            through = version
        case .sqlx:
            for row in try await connection.query("SELECT version::text, success, installed_on::text, checksum FROM \(quoted)") {
                let version = try version(row.decode(String.self, at: 0))
                guard try row.decode(Bool.self, at: 1) else {
                    throw MigrationError(.foreignHistory, "sqlx's \(table) records version \(version) as failed part way (success = false); repair the database and that row by hand, then adopt")
                }
                applied[version] = try row.decode(String?.self, at: 2)
                checksums[version] = .sha384(try row.decode(Data.self, at: 3))
            }
        case .flyway:
            try await readFlyway(quoted, on: connection)
        }
    }

    /// Flyway's rows in the order they were run: migrations, undos, deletions and baselines.
    private mutating func readFlyway(_ quoted: String, on connection: Connection) async throws {
        // A repeatable migration (`R__…`, no version) that failed: Flyway itself will not go on.
        if let failed = try await connection.query("SELECT script FROM \(quoted) WHERE version IS NULL AND NOT success ORDER BY installed_rank LIMIT 1").first {
            let script = try failed.decode(String.self, at: 0)
            throw MigrationError(.foreignHistory, "Flyway's \(table) records the repeatable migration \(TerminalText.escaped(script, limit: 80)) as failed; "
                                 + "repair it (Flyway's `repair`) or by hand, then adopt")
        }
        let rows = try await connection.query("""
            SELECT version, type, success, installed_on::timestamptz::text, checksum FROM \(quoted)
            WHERE version IS NOT NULL ORDER BY installed_rank
            """)
        for row in rows {
            let version = try version(row.decode(String.self, at: 0))
            let type = try row.decode(String.self, at: 1)
            // The schemas Flyway created itself (version 0, `<< Flyway Schema Creation >>`): no migration.
            if type == "SCHEMA" { continue }
            guard try row.decode(Bool.self, at: 2) else {
                throw MigrationError(.foreignHistory, "Flyway's \(table) records version \(version) as failed; repair it (Flyway's `repair`) or by hand, then adopt")
            }
            if type.hasPrefix("UNDO") || type == "DELETE" {
                applied[version] = nil
                checksums[version] = nil
            } else if type.hasSuffix("BASELINE") {
                through = max(through ?? version, version)
            } else {
                applied[version] = try row.decode(String?.self, at: 3)
                checksums[version] = try row.decode(Int32?.self, at: 4).map(ForeignChecksum.crc32)
            }
        }
    }

    private func version(_ text: String) throws -> MigrationVersion {
        guard let version = MigrationVersion(text.trimmingCharacters(in: .whitespaces)) else {
            throw MigrationError(.foreignHistory, "\(tool)'s \(table) records \(TerminalText.escaped(text, limit: 60)) as a version, which is not one (digits, with dots between them)")
        }
        return version
    }
}
