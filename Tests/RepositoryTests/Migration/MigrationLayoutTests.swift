import Foundation
@testable import Repository
import Testing

/// golang-migrate's and sqlx's `.up.sql`/`.down.sql` files and Flyway's `V…__`/`U…__` files,
/// read as they are and run against a real database.
@Suite("Migration file layouts")
struct MigrationLayoutTests {
    let database: Database
    let cli: MigrateCommandTests

    init() async throws {
        cli = try await MigrateCommandTests()
        database = cli.database
    }

    @Test("golang-migrate's layout: up from .up.sql, down from .down.sql, errors pointed at the file they are in")
    func upDownFiles() async throws {
        let directory = try MigrationDirectory([
            "000001_create_teams.up.sql": "CREATE TABLE teams (id int);\n",
            "000001_create_teams.down.sql": "DROP TABLE teams;\n",
            "000002_add_name.up.sql": "ALTER TABLE teams ADD COLUMN name text;\n",
            "000002_add_name.down.sql": "-- undo\nALTER TABLE teams DROP COLUMN nonexistent;\n",
            "000003_only_up.up.sql": "CREATE TABLE players (id int);\n",
        ])
        defer { directory.remove() }
        let migrator = try directory.migrator()
        #expect(migrator.layout == .upDownFiles)
        #expect(migrator.migrations.map(\.name) == ["create_teams", "add_name", "only_up"])
        #expect(try await migrator.migrate(database).map(\.version) == [1, 2, 3])
        let irreversible = await #expect(throws: MigrationError.self) { try await migrator.rollback(database) }
        #expect(irreversible?.message.contains("000003_only_up.up.sql has no down file") == true, "\(irreversible?.message ?? "")")
        #expect(try await database.tableExists("players"))
        try directory.write("000003_only_up.down.sql", "DROP TABLE players;\n")
        let failing = await #expect(throws: MigrationError.self) { try await directory.migrator().rollback(database, steps: 2) }
        #expect(failing?.message.hasPrefix("\(directory.path)/000002_add_name.down.sql:2: ") == true, "\(failing?.message ?? "")")
        #expect(try await !database.tableExists("players"))  // version 3's rollback committed before 2's failed
        #expect(try await database.count("SELECT count(*) FROM schema_migrations") == 2)
    }

    @Test("a failure's line counts every kind of line ending: \\n, \\r\\n and a \\r alone (old Mac files)", arguments: ["\n", "\r\n", "\r"])
    func lineEndings(_ end: String) async throws {
        let head = ["-- migrate:up", "-- a comment", "CREATE TABLE IF NOT EXISTS ends (id int);", "", "SELECT 1;"]
        // The server points at `nope` (line 7); a division by zero has no position: its statement's line (6).
        for (tail, expected) in [(["SELECT", "  nope;"], "0001_ends.sql:7: column \"nope\" does not exist"), (["SELECT", "  1 / 0;"], "0001_ends.sql:6: division by zero")] {
            let directory = try MigrationDirectory(["0001_ends.sql": (head + tail).joined(separator: end) + end])
            defer { directory.remove() }
            let failed = await #expect(throws: MigrationError.self) { try await directory.migrator().migrate(database) }
            #expect(failed?.message.contains(expected) == true, "\(failed?.message ?? "")")
        }
    }

    @Test("golang-migrate files that wrap themselves in BEGIN … COMMIT run inside the migration's own transaction, history row included; a COMMIT between statements is still refused")
    func filesWithTheirOwnTransaction() async throws {
        let directory = try MigrationDirectory([
            "000001_create_teams.up.sql": "-- teams\nBEGIN;\nCREATE TABLE teams (id int);\nCOMMIT;\n/* end */\n",
            "000001_create_teams.down.sql": "begin  work;\nDROP TABLE teams;\nEND;\n",
            "000002_fails.up.sql": "START TRANSACTION;\nCREATE TABLE players (id int);\nSELECT 1 / 0;\nCOMMIT;\n",
        ])
        defer { directory.remove() }
        let migrator = try directory.migrator()
        let failed = await #expect(throws: MigrationError.self) { try await migrator.migrate(database) }
        #expect(failed?.message.contains("000002_fails.up.sql:3: division by zero") == true, "\(failed?.message ?? "")")
        #expect(try await database.tableExists("teams"))
        #expect(try await !database.tableExists("players"))  // the whole file rolled back with its history row
        #expect(try await database.count("SELECT count(*) FROM schema_migrations") == 1)
        try await migrator.rollback(database)
        #expect(try await !database.tableExists("teams"))

        try directory.write("000002_fails.up.sql", "CREATE TABLE players (id int);\nCOMMIT;\nCREATE TABLE coaches (id int);\n")
        let refused = #expect(throws: MigrationError.self) { try directory.migrator() }
        #expect(refused?.message.contains("000002_fails.up.sql:2: COMMIT in a section that runs in a transaction") == true, "\(refused?.message ?? "")")
    }

    @Test("Flyway's layout: dotted versions in Flyway's order, undo files, a text version column, --to with a dotted version")
    func flyway() async throws {
        var files: [String: String] = ["V1__log.sql": "CREATE TABLE log (position serial, version text);\n"]
        for version in ["1.1", "1.2", "1.10", "2", "10"] {
            files["V\(version)__step.sql"] = "INSERT INTO log (version) VALUES ('\(version)');\n"
            files["U\(version)__step.sql"] = "DELETE FROM log WHERE version = '\(version)';\n"
        }
        files["V3_1__underscored.sql"] = "INSERT INTO log (version) VALUES ('3.1');\n"
        files["R__views.sql"] = "CREATE VIEW v AS SELECT 1;\n"
        let directory = try MigrationDirectory(files)
        defer { directory.remove() }
        let migrator = try directory.migrator()
        #expect(migrator.layout == .flyway)
        #expect(migrator.migrations.map(\.version.description) == ["1", "1.1", "1.2", "1.10", "2", "3.1", "10"])
        #expect(migrator.skipped.map(\.file) == ["R__views.sql"])
        let up = try await cli.migrate("up", "--to", "1.10", "--dir", directory.path, "--database-url", cli.databaseURL)
        #expect(up.status == 0, "\(up.output)")
        #expect(try await database.query("SELECT version FROM log WHERE version IS NOT NULL ORDER BY position").map { try $0.decode(String.self, at: 0) } == ["1.1", "1.2", "1.10"])
        try await migrator.migrate(database)
        #expect(try await database.query("SELECT data_type FROM information_schema.columns WHERE table_name = 'schema_migrations' AND column_name = 'version'")[0].decode(String.self, at: 0) == "text")
        let status = try await cli.migrate("status", "--dir", directory.path, "--database-url", cli.databaseURL)
        #expect(status.output.contains("1.10") && status.output.contains("skipped R__views.sql: a Flyway repeatable migration"), "\(status.output)")
        let refused = await #expect(throws: MigrationError.self) { try await migrator.rollback(database, to: MigrationVersion("1.10")!) }
        #expect(refused?.kind == .irreversible)  // 3.1 has no U file: refused before anything ran
        try directory.write("U3.1__underscored.sql", "DELETE FROM log WHERE version = '3.1';\n")
        let undone = try await directory.migrator().rollback(database, to: MigrationVersion("1.10")!)
        #expect(undone.map(\.version.description) == ["10", "3.1", "2"])
        #expect(try await database.query("SELECT version FROM log WHERE version IS NOT NULL ORDER BY position").map { try $0.decode(String.self, at: 0) } == ["1.1", "1.2", "1.10"])
    }

    @Test("a version encodes as a string, integer or dotted, and none is rounded; numbers and strings both decode")
    func versionJSON() throws {
        let versions: [MigrationVersion] = [42, MigrationVersion("2.1")!, 123_456_789_012_345_678]
        #expect(String(decoding: try JSONEncoder().encode(versions), as: UTF8.self) == #"["42","2.1","123456789012345678"]"#)
        #expect(try JSONDecoder().decode([MigrationVersion].self, from: Data(#"[42,"2.1","123456789012345678"]"#.utf8)) == versions)
    }

    @Test("a directory mixing layouts is refused, saying so; a down file without its up file is named")
    func refusals() async throws {
        let mixed = try MigrationDirectory(["0001_a.sql": "-- migrate:up\nSELECT 1;\n", "0002_b.up.sql": "SELECT 2;\n"])
        defer { mixed.remove() }
        let error = #expect(throws: MigrationError.self) { try mixed.migrator() }
        #expect(error?.message.contains("mixes migration file layouts") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("0001_a.sql") == true && error?.message.contains("0002_b.up.sql") == true)
        let run = try await cli.migrate("status", "--dir", mixed.path, "--database-url", cli.databaseURL)
        #expect(run.status != 0 && run.output.contains("keep one layout per directory"), "\(run.output)")

        let orphan = try MigrationDirectory(["0001_a.up.sql": "SELECT 1;\n", "0002_b.down.sql": "SELECT 2;\n"])
        defer { orphan.remove() }
        let orphanError = #expect(throws: MigrationError.self) { try orphan.migrator() }
        #expect(orphanError?.message.contains("0002_b.down.sql undoes version 2, which has no up file") == true, "\(orphanError?.message ?? "")")

        let twice = try MigrationDirectory(["V1__a.sql": "SELECT 1;\n", "V1.0__b.sql": "SELECT 2;\n"])
        defer { twice.remove() }
        #expect(throws: MigrationError.self) { try twice.migrator() }
    }

    @Test("a whole-file section: COMMIT is refused with the way out, -- no-transaction runs it outside a transaction")
    func noTransaction() async throws {
        let committing = try MigrationDirectory(["0001_a.up.sql": "CREATE TABLE a (id int);\nCOMMIT;\nCREATE TABLE b (id int);\n"])
        defer { committing.remove() }
        let error = #expect(throws: MigrationError.self) { try committing.migrator() }
        #expect(error?.message.contains("0001_a.up.sql:2: COMMIT") == true && error?.message.contains("-- no-transaction") == true, "\(error?.message ?? "")")
        let concurrently = try MigrationDirectory([
            "0001_a.up.sql": "CREATE TABLE a (id int);\n",
            "0002_index.up.sql": "-- no-transaction\nCREATE INDEX CONCURRENTLY a_id ON a (id);\n",
        ])
        defer { concurrently.remove() }
        try await concurrently.migrator().migrate(database)
        #expect(try await database.count("SELECT count(*) FROM pg_indexes WHERE indexname = 'a_id'") == 1)
    }

    @Test("new continues the directory's layout")
    func newFiles() async throws {
        let golang = try MigrationDirectory(["000007_a.up.sql": "SELECT 1;\n", "000007_a.down.sql": "SELECT 1;\n"])
        defer { golang.remove() }
        let created = try await cli.migrate("new", "add_index", "--dir", golang.path)
        let lines = created.output.split(separator: "\n")
        #expect(lines.count == 2 && lines[0].hasSuffix("/000008_add_index.up.sql") && lines[1].hasSuffix("/000008_add_index.down.sql"), "\(created.output)")
        #expect(FileManager.default.fileExists(atPath: golang.path + "/000008_add_index.down.sql"))
        #expect(try golang.migrator().migrations.count == 2)

        let flyway = try MigrationDirectory(["V1__a.sql": "SELECT 1;\n", "V1.5__b.sql": "SELECT 1;\n"])
        defer { flyway.remove() }
        #expect(try Migrator.createFile(named: "c", in: flyway.path).hasSuffix("/V2__c.sql"))
        #expect(try flyway.migrator().migrations.map(\.version.description) == ["1", "1.5", "2"])
    }

    @Test("six migrate new at once in one directory take six versions, timestamped or numbered", arguments: ["20240101120000_users.sql", "0001_users.sql"])
    func newAtOnce(first: String) async throws {
        let directory = try MigrationDirectory([first: "-- migrate:up\nSELECT 1;\n-- migrate:down\n"])
        defer { directory.remove() }
        let runs = try await withThrowingTaskGroup(of: MigrateCommandTests.Run.self) { group in
            for index in 1...6 { group.addTask { try await cli.migrate("new", "step_\(index)", "--dir", directory.path) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(runs.allSatisfy { $0.status == 0 }, "\(runs.map(\.output))")
        let migrations = try directory.migrator().migrations
        #expect(migrations.count == 7 && Set(migrations.map(\.version)).count == 7, "\(migrations.map(\.source))")
    }
}
