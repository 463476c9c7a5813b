import Foundation
@testable import Repository
import Testing

@Suite("Migrator")
struct MigratorTests {
    let database: Database

    init() async throws {
        database = try await TestServer.makeDatabase()
    }

    static let people = "-- migrate:up\nCREATE TABLE people (id int PRIMARY KEY, name text);\n\n-- migrate:down\nDROP TABLE people;\n"

    @Test("applies pending migrations in order and records them")
    func appliesInOrder() async throws {
        let directory = try MigrationDirectory([
            "0002_emails.sql": "-- migrate:up\nALTER TABLE people ADD COLUMN email text;\n-- migrate:down\nALTER TABLE people DROP COLUMN email;",
            "0001_people.sql": Self.people,
        ])
        defer { directory.remove() }
        let applied = try await directory.migrator().migrate(database)
        #expect(applied.map(\.version) == [1, 2])
        #expect(try await database.count("SELECT count(*) FROM information_schema.columns WHERE table_name = 'people'") == 3)
        let status = try await directory.migrator().status(database)
        #expect(status.map(\.state) == [.applied, .applied])
        #expect(try await directory.migrator().migrate(database).isEmpty)
    }

    @Test("a syntax error in the third statement leaves nothing of the file, and names file and line")
    func failingMigrationLeavesNoTrace() async throws {
        let directory = try MigrationDirectory([
            "0001_people.sql": Self.people,
            "0002_broken.sql": """
                -- migrate:up
                CREATE TABLE a (id int);
                INSERT INTO a VALUES (1);
                CREATE TABLE b (id int,
                    name txet oops);
                """,
        ])
        defer { directory.remove() }
        let error = await #expect(throws: MigrationError.self) { try await directory.migrator().migrate(database) }
        #expect(error?.kind == .failed)
        #expect(error?.message.hasPrefix("\(directory.path)/0002_broken.sql:5: ") == true)
        #expect(error?.underlying?.sqlState == PostgresError.Code.syntaxError)
        #expect(try await database.tableExists("people"))
        #expect(try await !database.tableExists("a"))
        #expect(try await database.count("SELECT count(*) FROM schema_migrations") == 1)
        // Fix the file and run again: no dirty state to repair first.
        try directory.write("0002_broken.sql", "-- migrate:up\nCREATE TABLE a (id int);\n")
        #expect(try await directory.migrator().migrate(database).map(\.version) == [2])
    }

    @Test("a first migration that fails leaves no history table behind: the database is as before the run")
    func failingFirstMigrationLeavesNoTable() async throws {
        let directory = try MigrationDirectory(["0001_broken.sql": "-- migrate:up\nCREATE TABLE a (id int);\nSELECT 1/0;\n"])
        defer { directory.remove() }
        let error = await #expect(throws: MigrationError.self) { try await directory.migrator().migrate(database) }
        #expect(error?.kind == .failed)
        #expect(try await !database.tableExists("a"))
        #expect(try await !database.tableExists("schema_migrations"))
    }

    @Test("a migration that enables live changes before the live schema is installed says how to install it")
    func liveSchemaMissing() async throws {
        let directory = try MigrationDirectory(["0001_people.sql": Self.people, "0002_live.sql": "-- migrate:up\nSELECT live.enable_change_notifications('people');\n"])
        defer { directory.remove() }
        let error = await #expect(throws: MigrationError.self) { try await directory.migrator().migrate(database) }
        #expect(error?.message.contains(#"schema "live" does not exist"#) == true && error?.message.contains("migrate live install") == true,
                "\(String(describing: error))")
    }

    @Test("editing an applied file is drift: validate fails and migrate refuses")
    func checksumDrift() async throws {
        let directory = try MigrationDirectory(["0001_people.sql": Self.people])
        defer { directory.remove() }
        try await directory.migrator().migrate(database)
        try directory.write("0001_people.sql", Self.people.replacingOccurrences(of: "name text", with: "name varchar"))
        try directory.write("0002_more.sql", "-- migrate:up\nCREATE TABLE more (id int);")
        #expect(try await directory.migrator().status(database).map(\.state) == [.changed, .pending])
        let invalid = await #expect(throws: MigrationError.self) { try await directory.migrator().validate(database) }
        #expect(invalid?.message.contains("0001_people.sql changed after it was applied") == true)
        await #expect(throws: MigrationError.self) { try await directory.migrator().migrate(database) }
        #expect(try await !database.tableExists("more"))
    }

    @Test("a CRLF-only change is not drift")
    func lineEndings() async throws {
        let directory = try MigrationDirectory(["0001_people.sql": Self.people])
        defer { directory.remove() }
        try await directory.migrator().migrate(database)
        try directory.write("0001_people.sql", Self.people.replacingOccurrences(of: "\n", with: "\r\n"))
        try await directory.migrator().validate(database)
        #expect(try await directory.migrator().status(database).map(\.state) == [.applied])
    }

    @Test("line-break characters inside a string literal reach the server as the file has them, in every layout; the checksum still ignores CRLF")
    func breaksInLiterals() async throws {
        // U+2028, U+0085, a form feed, a vertical tab, a CR before LF: once made \n in the SQL sent.
        let text = "a\u{2028}b\u{85}c\u{0C}d\u{0B}e\r\nf"
        let directory = try MigrationDirectory([
            "0001_notes.sql": "-- migrate:up\r\nCREATE TABLE notes (id int, note text);\r\nINSERT INTO notes VALUES (1, '\(text)');\r\n-- migrate:down\r\nDROP TABLE notes;\r\n",
        ])
        defer { directory.remove() }
        try await directory.migrator().migrate(database)
        let stored = try await database.query("SELECT note FROM notes WHERE id = 1")[0].decode(String.self, at: 0)
        #expect(Array(stored.utf8) == Array(text.utf8))
        // The same file with LF endings outside the literal is the same migration.
        try directory.write("0001_notes.sql", "-- migrate:up\nCREATE TABLE notes (id int, note text);\nINSERT INTO notes VALUES (1, '\(text)');\n-- migrate:down\nDROP TABLE notes;\n")
        try await directory.migrator().validate(database)

        try await database.query("DELETE FROM schema_migrations")  // the next directory is another project
        let golang = try MigrationDirectory(["0002_more.up.sql": "INSERT INTO notes VALUES (2, '\(text)');\r\n", "0002_more.down.sql": "DELETE FROM notes WHERE id = 2;\r\n"])
        defer { golang.remove() }
        let applied = try await Migrator(directory: golang.path).migrate(database)
        #expect(applied.count == 1)
        let second = try await database.query("SELECT note FROM notes WHERE id = 2")[0].decode(String.self, at: 0)
        #expect(Array(second.utf8) == Array(text.utf8))
    }

    @Test("a file that starts with a byte-order mark is read without it: applied, and the same migration as its copy without one")
    func byteOrderMark() async throws {
        let directory = try MigrationDirectory(["0001_people.sql": "\u{FEFF}" + Self.people])
        defer { directory.remove() }
        #expect(try await directory.migrator().migrate(database).count == 1)
        try directory.write("0001_people.sql", Self.people)
        try await directory.migrator().validate(database)
    }

    @Test("an applied migration whose file is gone is reported missing")
    func missingFile() async throws {
        let directory = try MigrationDirectory(["0001_people.sql": Self.people, "0002_x.sql": "-- migrate:up\nCREATE TABLE x (id int);"])
        defer { directory.remove() }
        try await directory.migrator().migrate(database)
        try directory.delete("0002_x.sql")
        #expect(try await directory.migrator().status(database).map(\.state) == [.applied, .missing])
        let error = await #expect(throws: MigrationError.self) { try await directory.migrator().validate(database) }
        #expect(error?.message.contains("version 2 (x) was applied but its file is gone") == true)
    }

    @Test("an older pending migration is refused unless out-of-order is allowed")
    func outOfOrder() async throws {
        let directory = try MigrationDirectory(["0001_people.sql": Self.people, "0003_c.sql": "-- migrate:up\nCREATE TABLE c (id int);"])
        defer { directory.remove() }
        try await directory.migrator().migrate(database)
        try directory.write("0002_b.sql", "-- migrate:up\nCREATE TABLE b (id int);")
        let error = await #expect(throws: MigrationError.self) { try await directory.migrator().migrate(database) }
        #expect(error?.kind == .outOfOrder)
        await #expect(throws: MigrationError.self) { try await directory.migrator().validate(database) }
        var lenient = try directory.migrator()
        lenient.allowOutOfOrder = true
        #expect(try await lenient.migrate(database).map(\.version) == [2])
    }

    @Test("two migrators started together apply each migration exactly once")
    func concurrentRuns() async throws {
        var files = ["0001_log.sql": "-- migrate:up\nCREATE TABLE log (version int);"]
        for version in 2...10 {
            files[String(format: "%04d_step.sql", version)] = "-- migrate:up\nINSERT INTO log VALUES (\(version)); SELECT pg_sleep(0.01);"
        }
        let directory = try MigrationDirectory(files)
        defer { directory.remove() }
        let migrator = try directory.migrator()
        let otherDatabase = Database(database.configuration)
        async let first = migrator.migrate(database)
        async let second = migrator.migrate(otherDatabase)
        let total = try await first.count + second.count
        #expect(total == 10)
        #expect(try await database.count("SELECT count(*) FROM log") == 9)
        #expect(try await database.count("SELECT count(DISTINCT version) FROM log") == 9)
        otherDatabase.close()
    }

    @Test("a run that cannot get the lock in time says who holds it; the lock is the table's however it is spelled (hs, public.hs)",
          arguments: [nil, "public.schema_migrations", "\"public\".schema_migrations"])
    func lockTimeout(heldAs spelling: String?) async throws {
        let directory = try MigrationDirectory(["0001_a.sql": "-- migrate:up\nSELECT 1;"])
        defer { directory.remove() }
        var impatient = try directory.migrator()
        impatient.lockTimeout = .milliseconds(300)
        // Another run's lock, held for as long as the test needs (no race with a sleep).
        try await database.withConnection { connection in
            let history = try MigrationHistory(table: spelling ?? impatient.historyTable, connection: connection)
            let (lock, _) = try await history.lock(timeout: .seconds(5))
            let error = await #expect(throws: MigrationError.self) { try await impatient.migrate(database) }
            #expect(error?.kind == .lockTimeout)
            #expect(error?.message.contains("server process") == true)
            try await history.unlock(lock)
        }
        #expect(try await impatient.migrate(database).count == 1)
    }

    @Test("runs whose search_paths differ but find the same history table take one lock (a role's own schema first, and another role's run): the second waits (a stranger's run applied a migration twice)")
    func lockOfTheTableFound() async throws {
        let directory = try MigrationDirectory(["0001_a.sql": "-- migrate:up\nSELECT 1;", "0002_b.sql": "-- migrate:up\nSELECT 2;"])
        defer { directory.remove() }
        var impatient = try directory.migrator()
        impatient.lockTimeout = .milliseconds(300)
        _ = try await impatient.migrate(database, to: MigrationVersion(1))
        try await database.query("CREATE SCHEMA own_schema")
        // Another run's lock, taken where the search_path leads with a schema that has no history table.
        try await database.withConnection { connection in
            try await connection.query("SET search_path TO own_schema, public")
            let history = try MigrationHistory(table: impatient.historyTable, connection: connection)
            let (lock, found) = try await history.lock(timeout: .seconds(5))
            #expect(found.quotedTable == SQLIdentifier.quoted("public") + "." + SQLIdentifier.quoted("schema_migrations"))
            let error = await #expect(throws: MigrationError.self) { try await impatient.migrate(database) }
            #expect(error?.kind == .lockTimeout)
            try await history.unlock(lock)
        }
        #expect(try await impatient.migrate(database).count == 1)
    }

    @Test("CREATE INDEX CONCURRENTLY runs in a transaction:false section")
    func nonTransactional() async throws {
        let directory = try MigrationDirectory([
            "0001_people.sql": Self.people,
            "0002_index.sql": "-- migrate:up transaction:false\nCREATE INDEX CONCURRENTLY people_name ON people (name);\nCREATE INDEX CONCURRENTLY people_id_name ON people (id, name);\n-- migrate:down transaction:false\nDROP INDEX CONCURRENTLY people_name;\nDROP INDEX CONCURRENTLY people_id_name;",
        ])
        defer { directory.remove() }
        try await directory.migrator().migrate(database)
        #expect(try await database.count("SELECT count(*) FROM pg_indexes WHERE tablename = 'people'") == 3)
        try await directory.migrator().rollback(database)
        #expect(try await database.count("SELECT count(*) FROM pg_indexes WHERE tablename = 'people'") == 1)
    }

    @Test("a transaction:false section failing part way says its earlier statements stay applied; run again and failing on its first, that none ran")
    func nonTransactionalFailure() async throws {
        let directory = try MigrationDirectory([
            "0001_people.sql": Self.people,
            "0002_half.sql": "-- migrate:up transaction:false\nCREATE TABLE t3 (x int);\nSELECT 1/0;\n",
        ])
        defer { directory.remove() }
        let first = await #expect(throws: MigrationError.self) { try await directory.migrator().migrate(database) }
        #expect(first?.message.contains("0002_half.sql:3: division by zero") == true && first?.message.contains("earlier statements of this transaction:false section stay applied") == true,
                "\(first?.message ?? "")")
        let again = await #expect(throws: MigrationError.self) { try await directory.migrator().migrate(database) }
        #expect(again?.message.contains("0002_half.sql:2:") == true && again?.message.contains("no statement of it ran; no history row was written") == true,
                "\(again?.message ?? "")")
        #expect(try await database.count("SELECT count(*) FROM schema_migrations") == 1)
    }

    @Test("a transaction:false section that leaves a BEGIN open fails, saying so, instead of reporting an applied migration its session rolls back")
    func sectionLeavingATransactionOpen() async throws {
        let directory = try MigrationDirectory([
            "0001_people.sql": Self.people,
            "0002_open.sql": "-- migrate:up transaction:false\nCREATE TABLE before_begin (x int);\nBEGIN;\nCREATE TABLE t2 (x int);\n",
        ])
        defer { directory.remove() }
        let error = await #expect(throws: MigrationError.self) { try await directory.migrator().migrate(database) }
        #expect(error?.message.contains("0002_open.sql: the section left a transaction open") == true, "\(error?.message ?? "")")
        #expect(try await database.count("SELECT count(*) FROM schema_migrations") == 1)
        #expect(try await !database.tableExists("t2"))
        #expect(try await database.tableExists("before_begin"))
    }

    @Test("a migration that empties the search_path, as pg_dump's files do, is applied and recorded; so is its roll back")
    func searchPathChanged() async throws {
        let directory = try MigrationDirectory([
            "0001_people.sql": Self.people,
            "0002_dump.sql": "-- migrate:up\nSELECT pg_catalog.set_config('search_path', '', false);\nCREATE TABLE public.t2 (x int);\n-- migrate:down\nSET search_path TO pg_catalog;\nDROP TABLE public.t2;\n",
            "0003_after.sql": "-- migrate:up\nCREATE TABLE public.t3 (x int);\n-- migrate:down\nDROP TABLE public.t3;\n",
        ])
        defer { directory.remove() }
        #expect(try await directory.migrator().migrate(database).map(\.version) == [1, 2, 3])
        // The run's connection, whose session the migration changed, is not handed out again.
        #expect(try await database.count("SELECT count(*) FROM schema_migrations") == 3)
        #expect(try await directory.migrator().rollback(database, steps: 2).map(\.version) == [3, 2])
        #expect(try await database.count("SELECT count(*) FROM schema_migrations") == 1)
    }

    @Test("rolling back a migration without a down section is refused, and nothing changes")
    func irreversible() async throws {
        let directory = try MigrationDirectory(["0001_people.sql": Self.people, "0002_x.sql": "-- migrate:up\nCREATE TABLE x (id int);"])
        defer { directory.remove() }
        try await directory.migrator().migrate(database)
        let error = await #expect(throws: MigrationError.self) { try await directory.migrator().rollback(database, steps: 2) }
        #expect(error?.kind == .irreversible)
        #expect(try await database.count("SELECT count(*) FROM schema_migrations") == 2)
        #expect(try await database.tableExists("people"))
    }

    @Test("rollback undoes the newest migrations and their history rows")
    func rollback() async throws {
        let directory = try MigrationDirectory(["0001_people.sql": Self.people])
        defer { directory.remove() }
        try await directory.migrator().migrate(database)
        #expect(try await directory.migrator().rollback(database).map(\.version) == [1])
        #expect(try await !database.tableExists("people"))
        #expect(try await database.count("SELECT count(*) FROM schema_migrations") == 0)
    }

    @Test("dry runs change nothing")
    func dryRun() async throws {
        let directory = try MigrationDirectory(["0001_people.sql": Self.people])
        defer { directory.remove() }
        #expect(try await directory.migrator().migrate(database, dryRun: true).map(\.version) == [1])
        #expect(try await !database.tableExists("people"))
        #expect(try await !database.tableExists("schema_migrations"))
        try await directory.migrator().migrate(database)
        #expect(try await directory.migrator().rollback(database, dryRun: true).map(\.version) == [1])
        #expect(try await database.tableExists("people"))
    }

    @Test("a directory of 100 migrations applies in one run")
    func hundredFiles() async throws {
        var files = ["0001_base.sql": "-- migrate:up\nCREATE TABLE counter (n int);"]
        for version in 2...100 { files[String(format: "%04d_n.sql", version)] = "-- migrate:up\nINSERT INTO counter VALUES (\(version));" }
        let directory = try MigrationDirectory(files)
        defer { directory.remove() }
        let lines = Recorder<String>()
        var migrator = try directory.migrator()
        migrator.progress = { lines.append($0) }
        #expect(try await migrator.migrate(database).count == 100)
        #expect(try await database.count("SELECT count(*) FROM counter") == 99)
        #expect(lines.count == 100)
        #expect(lines.all.first?.hasPrefix("applied \(directory.path)/0001_base.sql in ") == true)
    }

    @Test("baseline marks an existing database as migrated through a version")
    func baseline() async throws {
        try await database.query("CREATE TABLE people (id int PRIMARY KEY, name text)")
        let directory = try MigrationDirectory(["0001_people.sql": Self.people, "0002_x.sql": "-- migrate:up\nCREATE TABLE x (id int);"])
        defer { directory.remove() }
        // A version no migration has (a typo) records nothing.
        let typo = await #expect(throws: MigrationError.self) { try await directory.migrator().baseline(database, through: 5) }
        #expect(typo?.message.contains("no migration has version 5") == true, "\(typo?.message ?? "")")
        #expect(try await database.count("SELECT count(*) FROM pg_tables WHERE tablename = 'schema_migrations'") == 0)
        try await directory.migrator().baseline(database, through: 1)
        #expect(try await directory.migrator().migrate(database).map(\.version) == [2])
        await #expect(throws: MigrationError.self) { try await directory.migrator().baseline(database, through: 2) }
    }
}
