import Foundation
@testable import Repository

/// A project another tool migrated: three migrations in that tool's file layout under
/// `db/migrations`, and a database on which the tool applied the first two — their SQL run, and
/// its history table written as the tool writes it (the tool's own CREATE TABLE).
struct OtherToolProject {
    let tool: MigrationTool
    /// The project's root; the migrations are in `db/migrations` under it.
    let root: MigrationDirectory
    var migrations: String { root.path + "/db/migrations" }
    /// The versions the tool applied, and the one still pending.
    let applied: [MigrationVersion]
    let pending: MigrationVersion

    static let steps = [
        (name: "create_teams", up: "CREATE TABLE teams (id bigint PRIMARY KEY, name text NOT NULL);", down: "DROP TABLE teams;"),
        (name: "add_email", up: "ALTER TABLE teams ADD COLUMN email text;", down: "ALTER TABLE teams DROP COLUMN email;"),
        (name: "create_players", up: "CREATE TABLE players (id bigint PRIMARY KEY, team_id bigint REFERENCES teams);", down: "DROP TABLE players;"),
    ]

    /// The tool's history table, as the tool creates it on PostgreSQL.
    static func historyTable(_ tool: MigrationTool) -> String {
        switch tool {
        case .dbmate: "CREATE TABLE IF NOT EXISTS schema_migrations (version varchar(128) PRIMARY KEY)"
        case .golangMigrate: "CREATE TABLE IF NOT EXISTS schema_migrations (version bigint NOT NULL PRIMARY KEY, dirty boolean NOT NULL)"
        case .sqlx: """
            CREATE TABLE IF NOT EXISTS _sqlx_migrations (version BIGINT PRIMARY KEY, description TEXT NOT NULL,
                installed_on TIMESTAMPTZ NOT NULL DEFAULT now(), success BOOLEAN NOT NULL, checksum BYTEA NOT NULL,
                execution_time BIGINT NOT NULL)
            """
        case .flyway: """
            CREATE TABLE "public"."flyway_schema_history" ("installed_rank" INT NOT NULL, "version" VARCHAR(50),
                "description" VARCHAR(200) NOT NULL, "type" VARCHAR(20) NOT NULL, "script" VARCHAR(1000) NOT NULL,
                "checksum" INTEGER, "installed_by" VARCHAR(100) NOT NULL, "installed_on" TIMESTAMP NOT NULL DEFAULT now(),
                "execution_time" INTEGER NOT NULL, "success" BOOLEAN NOT NULL);
            ALTER TABLE "public"."flyway_schema_history" ADD CONSTRAINT "flyway_schema_history_pk" PRIMARY KEY ("installed_rank");
            CREATE INDEX "flyway_schema_history_s_idx" ON "public"."flyway_schema_history" ("success")
            """
        }
    }

    /// The tool's table's name.
    static func tableName(_ tool: MigrationTool) -> String {
        switch tool {
        case .dbmate, .golangMigrate: "schema_migrations"
        case .sqlx: "_sqlx_migrations"
        case .flyway: "flyway_schema_history"
        }
    }

    /// Writes the files and has the tool apply the first two migrations to `database`.
    static func make(_ tool: MigrationTool, database: Database) async throws -> OtherToolProject {
        let root = try MigrationDirectory()
        try FileManager.default.createDirectory(atPath: root.path + "/db/migrations", withIntermediateDirectories: true)
        let versions: [String] = switch tool {
        case .dbmate, .sqlx: ["20240101120000", "20240102120000", "20240103120000"]
        case .golangMigrate: ["000001", "000002", "000003"]
        case .flyway: ["1", "1.1", "2"]
        }
        for (step, version) in zip(steps, versions) {
            switch tool {
            case .dbmate:
                try root.write("db/migrations/\(version)_\(step.name).sql", "-- migrate:up\n\(step.up)\n\n-- migrate:down\n\(step.down)\n")
            case .golangMigrate, .sqlx:
                try root.write("db/migrations/\(version)_\(step.name).up.sql", step.up + "\n")
                try root.write("db/migrations/\(version)_\(step.name).down.sql", step.down + "\n")
            case .flyway:
                try root.write("db/migrations/V\(version)__\(step.name).sql", step.up + "\n")
                try root.write("db/migrations/U\(version)__\(step.name).sql", step.down + "\n")
            }
        }
        try await database.withConnection { connection in
            try await connection.execute(script: historyTable(tool))
            for step in steps.prefix(2) { try await connection.execute(script: step.up) }
            switch tool {
            case .dbmate:
                for version in versions.prefix(2) { try await connection.query("INSERT INTO schema_migrations (version) VALUES ($1)", [version]) }
            case .golangMigrate:
                try await connection.query("INSERT INTO schema_migrations (version, dirty) VALUES (2, false)")
            case .sqlx:
                for (step, version) in zip(steps, versions).prefix(2) {
                    try await connection.query(
                        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) VALUES ($1, $2, true, '\\x00', 1200000)",
                        [version, step.name.replacingOccurrences(of: "_", with: " ")])
                }
            case .flyway:
                try await connection.query("""
                    INSERT INTO flyway_schema_history VALUES
                    (0, NULL, '<< Flyway Schema Creation >>', 'SCHEMA', '"public"', NULL, 'postgres', now(), 0, true),
                    (1, '1', 'create teams', 'SQL', 'V1__create_teams.sql', 1234, 'postgres', now(), 5, true),
                    (2, '1.1', 'add email', 'SQL', 'V1.1__add_email.sql', -99, 'postgres', now(), 3, true)
                    """)
            }
        }
        let project = OtherToolProject(tool: tool, root: root, applied: versions.prefix(2).map { MigrationVersion($0)! },
                                       pending: MigrationVersion(versions[2])!)
        try await project.recordChecksums(in: database)
        return project
    }

    /// Records in sqlx's or Flyway's table the checksum of each applied version's file as it is
    /// now, as the tool computes it: sqlx SHA-384 of the file's bytes (by the server's
    /// `sha384`), Flyway the CRC-32 of its lines (``ForeignChecksum/flyway(_:)``, pinned to
    /// zlib's CRC-32 in `AdoptChecksumTests`).
    func recordChecksums(in database: Database) async throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: migrations)
        for version in applied {
            let prefix = tool == .flyway ? "V\(version)__" : "\(version)_"
            guard let file = files.first(where: { $0.hasPrefix(prefix) && !$0.hasSuffix(".down.sql") }),
                  let contents = FileManager.default.contents(atPath: migrations + "/" + file) else { continue }
            switch tool {
            case .sqlx:
                try await database.query("UPDATE _sqlx_migrations SET checksum = sha384($1) WHERE version = $2", [SQLValue.bytes(Array(contents)), SQLValue.text("\(version)")])
            case .flyway:
                try await database.query("UPDATE flyway_schema_history SET checksum = $1 WHERE version = $2 AND type = 'SQL'",
                                         [SQLValue.text("\(ForeignChecksum.flyway(contents))"), SQLValue.text("\(version)")])
            case .dbmate, .golangMigrate:
                return
            }
        }
    }
}
