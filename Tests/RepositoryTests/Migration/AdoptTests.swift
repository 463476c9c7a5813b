import Foundation
@testable import Repository
import Testing

/// Databases that dbmate, golang-migrate, sqlx and Flyway migrated, taken over by `adopt`.
@Suite("Adopting another tool's history")
struct AdoptTests {
    let database: Database
    let cli: MigrateCommandTests

    init() async throws {
        cli = try await MigrateCommandTests()
        database = cli.database
    }

    @Test("each tool's table is recognised, named, and taken over: versions recorded with today's checksums, nothing applied, the table kept",
          arguments: MigrationTool.allCases)
    func adopt(tool: MigrationTool) async throws {
        let project = try await OtherToolProject.make(tool, database: database)
        defer { project.root.remove() }
        let migrator = try Migrator(directory: project.migrations)
        let before = await #expect(throws: MigrationError.self) { try await migrator.status(database) }
        #expect(before?.kind == .foreignHistory)
        #expect(before?.message.contains("\(OtherToolProject.tableName(tool)) is \(tool)'s migration history table") == true, "\(before?.message ?? "")")
        await #expect(throws: MigrationError.self) { try await migrator.migrate(database) }

        let adoption = try await migrator.adopt(database)
        #expect(adoption.tool == tool)
        #expect(adoption.versions == project.applied)
        #expect(adoption.renamedTo == OtherToolProject.tableName(tool) + "_adopted")
        let rows = try await database.query("SELECT version::text, checksum, applied_by FROM schema_migrations ORDER BY applied_at, version")
        #expect(try rows.map { try $0.decode(String.self, at: 0) } == project.applied.map(\.description))
        #expect(try rows.map { try $0.decode(String.self, at: 1) } == migrator.migrations.prefix(2).map(\.checksum))
        #expect(try rows.map { try $0.decode(String.self, at: 2) } == ["adopted from \(tool)", "adopted from \(tool)"])
        #expect(try await database.tableExists(adoption.renamedTo))
        #expect(try await !database.tableExists("players"))  // applied nothing

        #expect(try await migrator.status(database).map(\.state) == [.applied, .applied, .pending])
        #expect(try await migrator.migrate(database).map(\.version) == [project.pending])
        #expect(try await migrator.rollback(database, steps: 2).map(\.version) == [project.pending, project.applied[1]])
        #expect(try await database.count("SELECT count(*) FROM information_schema.columns WHERE table_name = 'teams' AND column_name = 'email'") == 0)
        await #expect(throws: MigrationError.self) { try await migrator.adopt(database) }  // once only
    }

    @Test("sqlx's simple files (plain SQL, no markers, no down): read as up sections, adopted, the pending one applied, a new file plain, a rollback refused")
    func sqlxSimpleFiles() async throws {
        let project = try await OtherToolProject.make(.sqlx, database: database)
        defer { project.root.remove() }
        // The same migrations as `sqlx migrate add` writes them without -r: one plain file each.
        let directory = project.migrations
        for file in try FileManager.default.contentsOfDirectory(atPath: directory) {
            try FileManager.default.removeItem(atPath: directory + "/" + file)
        }
        for (step, version) in zip(OtherToolProject.steps, project.applied + [project.pending]) {
            try project.root.write("db/migrations/\(version)_\(step.name).sql", "-- \(step.name)\n\(step.up)\n")
        }
        try await project.recordChecksums(in: database)
        let migrator = try Migrator(directory: directory)
        #expect(migrator.layout == .plainFiles)
        #expect(migrator.migrations.map(\.name) == OtherToolProject.steps.map(\.name))
        let adoption = try await migrator.adopt(database)
        #expect(adoption.tool == .sqlx && adoption.versions == project.applied)
        #expect(try await migrator.migrate(database).map(\.version) == [project.pending])
        #expect(try await database.tableExists("players"))
        let rollback = await #expect(throws: MigrationError.self) { try await migrator.rollback(database) }
        #expect(rollback?.message.contains("\(project.pending)_create_players.sql") == true, "\(rollback?.message ?? "")")

        let created = try Migrator.createFile(named: "add coach", in: directory)
        #expect(try String(contentsOfFile: created, encoding: .utf8) == "\n", "a plain file, as the others")
        #expect(try Migrator(directory: directory).layout == .plainFiles)
        // A marker in one file makes it dbmate's layout, where a file without one is an error.
        try project.root.write("db/migrations/\(project.pending)_create_players.sql", "-- migrate:up\nSELECT 1;\n")
        let mixed = #expect(throws: MigrationError.self) { try Migrator(directory: directory) }
        #expect(mixed?.message.contains("SQL before the -- migrate:up marker") == true, "\(mixed?.message ?? "")")
        // Other tools' markers this tool does not read are never taken for plain SQL (their down section would run).
        for (up, down) in [("-- +goose Up", "-- +goose Down"), ("-- +migrate Up", "-- +migrate Down")] {
            let sections = try MigrationDirectory(["0001_a.sql": "\(up)\nCREATE TABLE a (id int);\n\(down)\nDROP TABLE a;\n"])
            defer { sections.remove() }
            #expect(throws: MigrationError.self, "\(up)") { try sections.migrator() }
        }
    }

    @Test("a dirty golang-migrate table is refused, naming the version; nothing changes")
    func dirty() async throws {
        let project = try await OtherToolProject.make(.golangMigrate, database: database)
        defer { project.root.remove() }
        try await database.query("UPDATE schema_migrations SET version = 3, dirty = true")
        let error = await #expect(throws: MigrationError.self) { try await Migrator(directory: project.migrations).adopt(database) }
        #expect(error?.message.contains("golang-migrate's schema_migrations is dirty at version 3") == true, "\(error?.message ?? "")")
        #expect(try await database.count("SELECT count(*) FROM schema_migrations WHERE dirty") == 1)
        #expect(try await !database.tableExists("schema_migrations_adopted"))
        // -1, golang-migrate's "no version", left dirty by a migration down to none.
        try await database.query("UPDATE schema_migrations SET version = -1, dirty = true")
        let none = await #expect(throws: MigrationError.self) { try await Migrator(directory: project.migrations).adopt(database) }
        #expect(none?.message.contains("golang-migrate's schema_migrations is dirty with no version (-1)") == true, "\(none?.message ?? "")")
        // A dirty row below the newest (golang-migrate keeps one row; this one was left by hand).
        try await database.query("UPDATE schema_migrations SET version = 3, dirty = false")
        try await database.query("INSERT INTO schema_migrations VALUES (2, true)")
        let below = await #expect(throws: MigrationError.self) { try await Migrator(directory: project.migrations).adopt(database) }
        #expect(below?.message.contains("golang-migrate's schema_migrations is dirty at version 2") == true, "\(below?.message ?? "")")
        #expect(try await !database.tableExists("schema_migrations_adopted"))
    }

    @Test("sqlx's and Flyway's failed rows are refused, naming the version")
    func failed() async throws {
        let sqlx = try await OtherToolProject.make(.sqlx, database: database)
        defer { sqlx.root.remove() }
        try await database.query("UPDATE _sqlx_migrations SET success = false WHERE version = 20240102120000")
        let error = await #expect(throws: MigrationError.self) { try await Migrator(directory: sqlx.migrations).adopt(database) }
        #expect(error?.message.contains("version 20240102120000 as failed") == true, "\(error?.message ?? "")")

        let other = try await TestServer.makeDatabase()
        let flyway = try await OtherToolProject.make(.flyway, database: other)
        defer { flyway.root.remove() }
        try await other.query("INSERT INTO flyway_schema_history VALUES (3, '2', 'create players', 'SQL', 'V2__create_players.sql', 1, 'me', now(), 1, false)")
        let failed = await #expect(throws: MigrationError.self) { try await Migrator(directory: flyway.migrations).adopt(other) }
        #expect(failed?.message.contains("Flyway's flyway_schema_history records version 2 as failed") == true, "\(failed?.message ?? "")")

        // A failed repeatable migration has no version (a stranger's run saw it adopted).
        try await other.query("DELETE FROM flyway_schema_history WHERE installed_rank = 3")
        try await other.query("INSERT INTO flyway_schema_history VALUES (3, NULL, 'views', 'SQL', E'R__views\\u001b[31m.sql', 1, 'me', now(), 1, false)")
        let repeatable = await #expect(throws: MigrationError.self) { try await Migrator(directory: flyway.migrations).adopt(other) }
        #expect(repeatable?.message.contains("the repeatable migration R__views\\u{1b}[31m.sql as failed") == true, "\(repeatable?.message ?? "")")
        #expect(try await other.tableExists("flyway_schema_history"))
    }

    @Test("a version the other tool records while adopt runs is adopted, not applied again: adopt reads the tool's table once it holds it (a stranger's run lost it)")
    func toolWritingMeanwhile() async throws {
        let project = try await OtherToolProject.make(.dbmate, database: database)
        defer { project.root.remove() }
        let run = Database(database.configuration, maximumConnections: 1)
        defer { run.close() }
        // A dbmate run under way: its migration and history row written, not yet committed.
        let committing = AsyncStream<Void>.makeStream()
        let dbmate = Task {
            try await run.transaction { connection in
                try await connection.execute(script: OtherToolProject.steps[2].up)
                try await connection.query("INSERT INTO schema_migrations (version) VALUES ('20240103120000')")
                for await _ in committing.stream { break }
            }
        }
        let written = "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'schema_migrations' AND l.mode = 'RowExclusiveLock' AND l.granted"
        #expect(try await eventually { try await database.count(written) > 0 })
        let adoption = Task { try await Migrator(directory: project.migrations).adopt(database) }
        let waiting = "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'schema_migrations' AND NOT l.granted"
        #expect(try await eventually { try await database.count(waiting) > 0 })
        committing.continuation.yield()
        try await dbmate.value
        #expect(try await adoption.value.versions == project.applied + [project.pending])
        #expect(try await Migrator(directory: project.migrations).migrate(database).isEmpty)
    }

    @Test("Flyway: a baseline covers the versions below it; an undone version is pending again; the row of a schema Flyway created is no migration")
    func flywayBaselineAndUndo() async throws {
        let project = try await OtherToolProject.make(.flyway, database: database)
        defer { project.root.remove() }
        try await database.withConnection { try await $0.execute(script: """
            DELETE FROM flyway_schema_history WHERE version = '1';
            INSERT INTO flyway_schema_history VALUES
            (3, '1', '<< Flyway Baseline >>', 'BASELINE', '<< Flyway Baseline >>', NULL, 'me', now(), 0, true),
            (4, '2', 'create players', 'SQL', 'V2__create_players.sql', 7, 'me', now(), 4, true),
            (5, '2', 'create players', 'UNDO_SQL', 'U2__create_players.sql', 8, 'me', now(), 2, true),
            (6, '0', '<< Flyway Schema Creation >>', 'SCHEMA', '"public"', NULL, 'me', now(), 0, true)
            """) }
        let adoption = try await Migrator(directory: project.migrations).adopt(database)
        #expect(adoption.versions == [1, MigrationVersion("1.1")!])
    }

    @Test("an applied version without a file is refused, listed; a table of another shape is named with its columns, in one line")
    func refusals() async throws {
        let project = try await OtherToolProject.make(.dbmate, database: database)
        defer { project.root.remove() }
        try await database.query("INSERT INTO schema_migrations (version) VALUES ('20231231000000')")
        let missing = await #expect(throws: MigrationError.self) { try await Migrator(directory: project.migrations).adopt(database) }
        #expect(missing?.message.contains("dbmate applied version(s) 20231231000000 but no migration file has them") == true, "\(missing?.message ?? "")")

        try await database.query("DROP TABLE schema_migrations")
        try await database.query("CREATE TABLE schema_migrations (id serial PRIMARY KEY, applied text)")
        for command in ["status", "up", "adopt"] {
            let run = try await cli.migrate(command, "--dir", project.migrations, "--database-url", cli.databaseURL)
            #expect(run.status != 0 && run.output.split(separator: "\n").count == 1, "\(run.output)")
            #expect(run.output.contains("schema_migrations is not a migration history table this tool knows"), "\(run.output)")
            #expect(run.output.contains("its columns are id integer, applied text"), "\(run.output)")
            #expect(!run.output.contains("SELECT"), "\(run.output)")
        }
    }

    @Test("adopt waits for the migration lock like every other run")
    func underTheLock() async throws {
        let project = try await OtherToolProject.make(.sqlx, database: database)
        defer { project.root.remove() }
        var migrator = try Migrator(directory: project.migrations)
        migrator.lockTimeout = .milliseconds(300)
        try await database.withConnection { connection in
            let history = try MigrationHistory(table: migrator.historyTable, connection: connection)
            let (lock, _) = try await history.lock(timeout: .seconds(5))
            let error = await #expect(throws: MigrationError.self) { try await migrator.adopt(database) }
            #expect(error?.kind == .lockTimeout)
            try await history.unlock(lock)
        }
        #expect(try await migrator.adopt(database).versions == project.applied)
    }
}
