import Foundation
@testable import Repository
import Testing

/// What a migration's session may do to the run: string syntax that moves where statements end,
/// a session that can no longer write the history, a file edited before its down section runs.
/// Each is said in one line naming the file, and says what stays applied.
@Suite("Migrations: the session a migration runs in")
struct MigrationSessionTests {
    let database: Database
    let cli: MigrateCommandTests

    init() async throws {
        cli = try await MigrateCommandTests()
        database = cli.database
    }

    /// A `COMMIT` hidden where a backslash would escape a quote, were backslashes escapes.
    static let hiddenCommit = "SELECT '\\'' AS a; COMMIT; SELECT 1/0; SELECT '\\'' AS b;"

    func tables() async throws -> Int {
        try await database.count("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
    }

    @Test("a migration turning standard_conforming_strings off is refused before anything runs; setting it on, as pg_dump files do, or naming it otherwise, is taken")
    func stringSyntaxInAFile() async throws {
        let refused = try MigrationDirectory(["0001_a.sql": "-- migrate:up\nCREATE TABLE w1 (id int);\nSET standard_conforming_strings = off;\n\(Self.hiddenCommit)\n"])
        defer { refused.remove() }
        let error = await #expect(throws: MigrationError.self) { try await refused.migrator().migrate(database) }
        #expect(error?.message.hasSuffix("0001_a.sql:3: turning standard_conforming_strings off would change where statements end "
                                         + "(backslashes would escape quotes in '…' strings); migrate reads strings as PostgreSQL does by default: remove it, and use E'…' for escapes") == true,
                "\(error?.message ?? "")")
        #expect(try await tables() == 0)
        // Reading the files is not refused: status still works.
        #expect(try await refused.migrator().status(database).count == 1)
        for setting in ["SET standard_conforming_strings TO 'off'", "SET LOCAL standard_conforming_strings = false", "/* header */ SET SESSION standard_conforming_strings = 0",
                        "SELECT pg_catalog.set_config('standard_conforming_strings', 'off', false)"] {
            let directory = try MigrationDirectory(["0001_a.sql": "-- migrate:up\n\(setting);\n"])
            defer { directory.remove() }
            await #expect(throws: MigrationError.self, "\(setting)") { try await directory.migrator().migrate(database) }
        }
        let name = try await database.name()
        let taken = try MigrationDirectory(["0001_a.sql": """
            -- migrate:up
            /* pg_dump */ SET standard_conforming_strings = on;
            CREATE TABLE w1 (x text -- needs standard_conforming_strings on
            );
            DO $$ BEGIN ASSERT current_setting('standard_conforming_strings') = 'on'; END $$;
            ALTER DATABASE \(SQLIdentifier.quoted(name)) SET standard_conforming_strings = on;
            SELECT '\\' AS backslash;

            """])
        defer { taken.remove() }
        try await taken.migrator().migrate(database)
        #expect(try await tables() == 2)  // w1, and the history
    }

    @Test("standard_conforming_strings turned off where the file's text cannot tell (pg_settings, EXECUTE in a DO block, a dollar-quoted set_config): a COMMIT hidden in a string never runs, and nothing stays",
          arguments: ["UPDATE pg_settings SET setting = 'off' WHERE name = 'standard_conforming_strings'",
                      "DO $$ BEGIN EXECUTE 'SET standard_conforming_strings = off'; END $$",
                      "SELECT set_config($$standard_conforming_strings$$, $$f$$, false)"])
    func stringSyntaxTurnedOffUnseen(turningOff: String) async throws {
        let directory = try MigrationDirectory(["0001_a.sql": "-- migrate:up\nCREATE TABLE w1 (id int);\n\(turningOff);\n\(Self.hiddenCommit)\nCREATE TABLE w2 (id int);\n"])
        defer { directory.remove() }
        let error = await #expect(throws: MigrationError.self) { try await directory.migrator().migrate(database) }
        // Each statement is sent alone: the server, reading several commands in one, refuses it.
        #expect(error?.message.contains("0001_a.sql:4: cannot insert multiple commands into a prepared statement (SQLSTATE 42601) (migrate sends one statement at a time") == true,
                "\(error?.message ?? "")")
        #expect(try await tables() == 0)
    }

    @Test("a database with standard_conforming_strings off is refused before anything runs: a COMMIT hidden in a string never runs")
    func stringSyntaxOfTheDatabase() async throws {
        let name = try await database.name()
        try await database.query("ALTER DATABASE \(SQLIdentifier.quoted(name)) SET standard_conforming_strings = off")
        let directory = try MigrationDirectory(["0001_a.sql": "-- migrate:up\nCREATE TABLE w1 (id int);\n\(Self.hiddenCommit)\n"])
        defer { directory.remove() }
        // A new session of the command sees the database's setting.
        let run = try await cli.migrate("up", "--dir", directory.path, "--database-url", cli.databaseURL)
        #expect(run.status != 0)
        #expect(run.output.hasPrefix("migrate: the server runs this session with standard_conforming_strings = off") && run.output.split(separator: "\n").count == 1, "\(run.output)")
        #expect(try await tables() == 0)
        // With the setting on for the connection, the file is read as the server reads it: the
        // quotes pair up otherwise, into one statement the server refuses, and nothing stays.
        let on = try await cli.migrate("up", "--dir", directory.path, "--database-url", cli.databaseURL + " options='-c standard_conforming_strings=on'")
        #expect(on.status != 0 && on.output.contains("0001_a.sql:3: syntax error at or near \"\\\""), "\(on.output)")
        #expect(try await tables() == 0)
    }

    @Test("a transaction:false section after which the history row cannot be written: the error names the file and says its statements stay applied")
    func historyNotWritable() async throws {
        let directory = try MigrationDirectory(["0001_a.sql": "-- migrate:up transaction:false\nCREATE TABLE r1 (id int);\nALTER TABLE schema_migrations ADD CONSTRAINT never CHECK (false) NOT VALID;\n"])
        defer { directory.remove() }
        let error = await #expect(throws: MigrationError.self) { try await directory.migrator().migrate(database) }
        #expect(error?.message.hasPrefix("\(directory.path)/0001_a.sql: its statements ran, but the history table could not be written: new row for relation \"schema_migrations\" violates check constraint \"never\"") == true,
                "\(error?.message ?? "")")
        #expect(error?.message.hasSuffix("its statements ran outside a transaction and stay applied, with no history row: undo them, or fix the cause and write the row yourself, before `migrate up` runs it again") == true,
                "\(error?.message ?? "")")
        #expect(try await tables() == 2)  // r1, and the history table, empty
    }

    @Test("what a migration sets for its session ends with it: a role without rights on the history, an emptied search_path, a read-only session; the next migration starts as it would alone")
    func sessionSettingsEndWithTheMigration() async throws {
        let role = "migration_owner_\(UInt32.random(in: 0...UInt32.max))"
        try await database.query("CREATE ROLE \(role) NOLOGIN")
        let schemaOwner = try await database.query("SELECT current_user")[0].decode(String.self, at: 0)
        try await database.query("GRANT CREATE, USAGE ON SCHEMA public TO \(role)")
        let directory = try MigrationDirectory([
            "0001_a.sql": "-- migrate:up transaction:false\nSET ROLE \(role);\nCREATE TABLE owned (id int);\nSET default_transaction_read_only = on;\n",
            "0002_b.sql": "-- migrate:up\nSET ROLE \(role);\nCREATE TABLE public.other (id int);\nSELECT pg_catalog.set_config('search_path', '', false);\n",
            "0003_c.sql": "-- migrate:up\nCREATE TABLE unqualified (id int);\n",
        ])
        defer { directory.remove() }
        try await directory.migrator().migrate(database)
        let owners = try await database.query("SELECT tablename, tableowner FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename").map {
            "\(try $0.decode(String.self, at: 0)) \(try $0.decode(String.self, at: 1))"
        }
        #expect(owners == ["other \(role)", "owned \(role)", "schema_migrations \(schemaOwner)", "unqualified \(schemaOwner)"])
        #expect(try await database.count("SELECT count(*) FROM schema_migrations WHERE applied_by = '\(schemaOwner)'") == 3)
        // Roles are the cluster's: this one goes, with what it owns here.
        try await database.withConnection { try await $0.execute(script: "DROP OWNED BY \(role) CASCADE; DROP ROLE \(role)") }
    }

    @Test("down refuses a migration whose file changed after it was applied: its down section may not undo what ran")
    func downOfAChangedFile() async throws {
        let directory = try MigrationDirectory(["0001_a.sql": "-- migrate:up\nCREATE TABLE d1 (id int);\n-- migrate:down\nDROP TABLE d1;\n"])
        defer { directory.remove() }
        try await directory.migrator().migrate(database)
        try directory.write("0001_a.sql", "-- migrate:up\nCREATE TABLE d2 (id int);\n-- migrate:down\nDROP TABLE d2;\n")
        let error = await #expect(throws: MigrationError.self) { try await directory.migrator().rollback(database) }
        #expect(error?.message.contains("0001_a.sql changed after it was applied (checksum drift), so its down section may not undo what ran") == true, "\(error?.message ?? "")")
        #expect(try await database.count("SELECT count(*) FROM pg_tables WHERE tablename = 'd1'") == 1)
    }
}
