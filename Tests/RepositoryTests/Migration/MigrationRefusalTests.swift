import Foundation
@testable import Repository
import Testing

/// Hostile migration files are refused before anything runs — through `Migrator` and through
/// the `migrate` command — with one line naming the file and line; failures point at the
/// failing statement's line.
@Suite("Migration refusals")
struct MigrationRefusalTests {
    let database: Database
    let cli: MigrateCommandTests

    init() async throws {
        cli = try await MigrateCommandTests()
        database = cli.database
    }

    /// Runs `up` both ways on a directory holding `files`; each must refuse with a message
    /// containing `expected`, and leave the database without tables or history.
    func expectRefusal(_ files: [String: String], _ expected: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let directory = try MigrationDirectory(files)
        defer { directory.remove() }
        let error = await #expect(throws: MigrationError.self, sourceLocation: sourceLocation) {
            try await Migrator(directory: directory.path).migrate(database)
        }
        #expect(error?.message.contains(expected) == true, "\(error?.message ?? "")", sourceLocation: sourceLocation)
        let run = try await cli.migrate("up", "--dir", directory.path, "--database-url", cli.databaseURL)
        #expect(run.status != 0, sourceLocation: sourceLocation)
        #expect(run.output.hasPrefix("migrate: ") && run.output.split(separator: "\n").count == 1, "\(run.output)", sourceLocation: sourceLocation)
        #expect(run.output.contains(expected), "\(run.output)", sourceLocation: sourceLocation)
        #expect(try await database.count("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") == 0, sourceLocation: sourceLocation)
    }

    @Test("a NUL byte in a migration is refused with its line; SQL text with a NUL is refused anywhere in the library")
    func nulBytes() async throws {
        try await expectRefusal(["0001_a.sql": "-- migrate:up\nCREATE TABLE n1 (id int);\n\0CREATE TABLE n2 (id int);\n"], "0001_a.sql:3: a NUL byte")
        let error = await #expect(throws: PostgresError.self) { try await database.query("SELECT 'visible'\0 || 'hidden'") }
        #expect(error?.kind == .invalidStatement)
        #expect(error?.message.contains("line 1, column 17") == true, "\(error?.message ?? "")")
    }

    @Test("COMMIT, ROLLBACK, BEGIN, SAVEPOINT… at statement level in a transactional section are refused with file:line and the way out")
    func transactionControl() async throws {
        try await expectRefusal(["0001_a.sql": "-- migrate:up\nCREATE TABLE a (id int);\nCOMMIT;\nCREATE TABLE b (id int);\nSELECT 1/0;\n"],
                                "0001_a.sql:3: COMMIT in a section that runs in a transaction")
        try await expectRefusal(["0001_a.sql": "-- migrate:up\nCREATE TABLE a (id int);\n  rollback ;\n"], "0001_a.sql:3: ROLLBACK")
        try await expectRefusal(["0001_a.sql": "-- migrate:up\n/* start */ START TRANSACTION;\n"], "0001_a.sql:2: START TRANSACTION")
        try await expectRefusal(["0001_a.sql": "-- migrate:up\nSAVEPOINT s;\n"], "transaction:false")
        // Behind comments of every kind: a line comment after a block comment, nested block comments.
        try await expectRefusal(["0001_a.sql": "-- migrate:up\nCREATE TABLE a (id int);\n/* step 2 */ -- commit what we have\nCOMMIT;\nCREATE TABLE b (id int);\nSELECT 1/0;\n"],
                                "0001_a.sql:3: COMMIT in a section that runs in a transaction")
        try await expectRefusal(["0001_a.sql": "-- migrate:up\nCREATE TABLE a (id int);\n/* x */\n-- y\n/* a /* b */ c */ commit;\n"], "0001_a.sql:3: COMMIT")
        try await expectRefusal(["0001_a.sql": "-- migrate:up\nSTART /* now */ -- at once\n TRANSACTION;\n"], "0001_a.sql:2: START TRANSACTION")
        try await expectRefusal(["0001_a.sql": "-- migrate:up\nCREATE TABLE a (id int);\n-- migrate:down\nDROP TABLE a;\nCOMMIT;\n"],
                                "0001_a.sql:5: COMMIT")
        // Not at statement level: in a dollar-quoted body, a string, a comment, an atomic body.
        let fine = try MigrationDirectory(["0001_fine.sql": """
            -- migrate:up
            CREATE TABLE notes (note text);
            CREATE PROCEDURE tidy() LANGUAGE plpgsql AS $$ BEGIN COMMIT; END $$;
            INSERT INTO notes VALUES ('COMMIT;'), (E'it\\'s; ROLLBACK;');
            -- COMMIT;
            /* outer /* inner */ COMMIT; */
            CREATE FUNCTION one() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; END;
            """])
        defer { fine.remove() }
        try await Migrator(directory: fine.path).migrate(database)
        #expect(try await database.count("SELECT count(*) FROM notes") == 2)
        #expect(try await database.query("SELECT one()")[0].decode(Int.self, at: 0) == 1)
    }

    @Test("a statement that releases the session's advisory locks (DISCARD ALL, pg_advisory_unlock_all) is refused before anything runs; the words in a string or a comment are not")
    func sessionLockRelease() async throws {
        try await expectRefusal(["0001_a.sql": "-- migrate:up transaction:false\nCREATE TABLE a (id int);\n  discard\n ALL;\n"],
                                "0001_a.sql:3: DISCARD ALL would release migrate's advisory lock")
        try await expectRefusal(["0001_a.sql": "-- migrate:up\nCREATE TABLE a (id int);\nSELECT pg_catalog.PG_ADVISORY_UNLOCK_ALL();\n"],
                                "0001_a.sql:3: pg_advisory_unlock_all() would release")
        let fine = try MigrationDirectory(["0001_fine.sql": """
            -- migrate:up transaction:false
            CREATE TABLE notes (note text); -- never DISCARD ALL here, nor pg_advisory_unlock_all()
            INSERT INTO notes VALUES ('DISCARD ALL'), ($$pg_advisory_unlock_all()$$);
            DISCARD PLANS;
            """])
        defer { fine.remove() }
        try await Migrator(directory: fine.path).migrate(database)
        #expect(try await database.count("SELECT count(*) FROM notes") == 2)
    }

    @Test("files that cannot be migrations: a directory, a symbolic-link loop, a named pipe, a device, invalid UTF-8, a duplicate version — each named")
    func unreadableFiles() async throws {
        let directory = try MigrationDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.path + "/0001_dir.sql", withIntermediateDirectories: true)
        #expect(throws: MigrationError.self) { try Migrator(directory: directory.path) }
        #expect((try? Migrator(directory: directory.path)) == nil)
        do { _ = try Migrator(directory: directory.path) } catch { #expect("\(error)".contains("0001_dir.sql is a directory")) }
        try FileManager.default.removeItem(atPath: directory.path + "/0001_dir.sql")

        try FileManager.default.createSymbolicLink(atPath: directory.path + "/0002_loop.sql", withDestinationPath: directory.path + "/0002_loop.sql")
        do { _ = try Migrator(directory: directory.path); Issue.record("a link loop was read") } catch {
            #expect("\(error)".contains("0002_loop.sql cannot be read"), "\(error)")
            #expect(!"\(error)".contains("NSCocoaErrorDomain") && !"\(error)".contains("error 256"), "\(error)")
        }
        try FileManager.default.removeItem(atPath: directory.path + "/0002_loop.sql")

        // A named pipe would be waited on forever, a device read forever: both refused, named.
        #expect(mkfifo(directory.path + "/0002_pipe.sql", 0o600) == 0)
        do { _ = try Migrator(directory: directory.path); Issue.record("a named pipe was read") } catch {
            #expect("\(error)".contains("0002_pipe.sql is a named pipe, not a migration file"), "\(error)")
        }
        try FileManager.default.removeItem(atPath: directory.path + "/0002_pipe.sql")
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/0002_zero.sql", withDestinationPath: "/dev/zero")
        do { _ = try Migrator(directory: directory.path); Issue.record("a device was read") } catch {
            #expect("\(error)".contains("0002_zero.sql is a device, not a migration file"), "\(error)")
        }
        try FileManager.default.removeItem(atPath: directory.path + "/0002_zero.sql")

        try Data([0x2D, 0x2D, 0x20, 0xFF, 0xFE]).write(to: URL(fileURLWithPath: directory.path + "/0003_latin.sql"))
        do { _ = try Migrator(directory: directory.path); Issue.record("invalid UTF-8 was read") } catch {
            #expect("\(error)".contains("0003_latin.sql is not valid UTF-8 (byte 3)"), "\(error)")
        }
        try directory.delete("0003_latin.sql")

        try directory.write("0004_one.sql", "-- migrate:up\nSELECT 1;\n")
        try directory.write("0004_two.sql", "-- migrate:up\nSELECT 2;\n")
        do { _ = try Migrator(directory: directory.path); Issue.record("a duplicate version was accepted") } catch {
            #expect("\(error)".contains("0004_one.sql") && "\(error)".contains("0004_two.sql"), "\(error)")
        }
    }

    @Test("a failure is pointed at the failing statement's line — at line 1, in the middle, after a multi-line function — with that statement shown")
    func failureLines() async throws {
        let cases: [(String, String)] = [
            ("-- migrate:up\nSELECT 1/0;\n", "0001_f.sql:2: division by zero (SQLSTATE 22012) in: SELECT 1/0"),
            ("-- migrate:up\nCREATE TABLE t1 (id int);\nCREATE TABLE t2 (id int);\n\nINSERT INTO t1 VALUES ('x');\nCREATE TABLE t3 (id int);\n",
             "0001_f.sql:5: invalid input syntax for type integer: \"x\" (SQLSTATE 22P02) in: INSERT INTO t1 VALUES ('x')"),
            ("""
             -- migrate:up
             CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $$
             BEGIN
                 -- a body; with semicolons;
                 RETURN 1;
             END
             $$;
             CREATE TABLE t1 (
                 id int,
                 bad nonexistent_type
             );
             """, "0001_f.sql:10: type \"nonexistent_type\" does not exist (SQLSTATE 42704) in: CREATE TABLE t1 ("),
            // An error with no position, in a statement after comments: its own line, its own text.
            ("-- migrate:up\nCREATE TABLE t1 (id int PRIMARY KEY);\n-- a duplicate\n/* twice,\n   on purpose */\nINSERT INTO t1 VALUES (1), (1);\n",
             "0001_f.sql:6: duplicate key value violates unique constraint \"t1_pkey\" — Key (id)=(1) already exists. (SQLSTATE 23505) in: INSERT INTO t1 VALUES (1), (1)"),
            // A password in the failing statement is not shown.
            ("-- migrate:up\nCREATE ROLE nobody_here LOGIN PASSWORD 'Hunter2Secret' BOGUS;\n",
             "0001_f.sql:2: unrecognized role option \"bogus\" (SQLSTATE 42601) in: CREATE ROLE nobody_here LOGIN PASSWORD '***' BOGUS"),
            // A RAISE's own detail and hint.
            ("-- migrate:up\nDO $$ BEGIN RAISE EXCEPTION 'm1' USING DETAIL = 'm2', HINT = 'm3'; END $$;\n",
             "0001_f.sql:2: m1 — m2 (SQLSTATE P0001) Hint: m3 in: DO $$ BEGIN RAISE EXCEPTION 'm1' USING DETAIL = 'm2', HINT = 'm3'; END $$"),
        ]
        for (contents, expected) in cases {
            let directory = try MigrationDirectory(["0001_f.sql": contents])
            defer { directory.remove() }
            let run = try await cli.migrate("up", "--dir", directory.path, "--database-url", cli.databaseURL)
            #expect(run.status != 0 && run.output.contains(expected), "\(run.output)")
            // Nothing of the migration stays — not even the history table its run would have made.
            #expect(try await database.count("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") == 0)
            #expect(try await database.count("SELECT count(*) FROM pg_proc WHERE proname = 'f'") == 0)
        }
    }

    @Test("a missing directory, a file given as the directory, and a history table name that names no table are refused in one line, before anything runs")
    func badOptions() async throws {
        let directory = try MigrationDirectory(["0001_a.sql": "-- migrate:up\nCREATE TABLE a (id int);\n"])
        defer { directory.remove() }
        let cases: [([String], String)] = [
            (["status", "--dir", directory.path + "/nowhere"], "the migrations directory \(directory.path)/nowhere does not exist"),
            (["status", "--dir", directory.path + "/0001_a.sql"], "0001_a.sql is a file, not a migrations directory"),
            (["status", "--dir", directory.path, "--history-table", ""], "names no table"),
            (["up", "--dir", directory.path, "--history-table", ""], "names no table"),
            (["up", "--dir", directory.path, "--history-table", "a.b.c"], "names no table"),
            (["up", "--dir", directory.path, "--history-table", "app."], "names no table"),
        ]
        for (arguments, expected) in cases {
            let run = try await cli.migrate(arguments + ["--database-url", cli.databaseURL])
            #expect(run.status != 0, "\(arguments)")
            #expect(run.output.hasPrefix("migrate: ") && run.output.split(separator: "\n").count == 1 && run.output.contains(expected), "\(arguments): \(run.output)")
        }
        #expect(try await !database.tableExists("a"))
    }

    @Test(".SQL in any case is a migration, and any name dbmate reads (digits first); everything skipped — hidden files too — is listed by status")
    func discovery() async throws {
        let directory = try MigrationDirectory(["0001_upper.SQL": "-- migrate:up\nCREATE TABLE upper_case (id int);\n",
                                                "002-dashed.sql": "-- migrate:up\nCREATE TABLE dashed (id int);\n",
                                                "20240101120000.sql": "-- migrate:up\nCREATE TABLE unnamed (id int);\n",
                                                ".#0003_lock.sql": "x", "README.md": "notes", "0002_draft.sql.bak": "x"])
        defer { directory.remove() }
        let up = try await cli.migrate("up", "--dir", directory.path, "--database-url", cli.databaseURL)
        #expect(up.status == 0, "\(up.output)")
        for table in ["upper_case", "dashed", "unnamed"] { #expect(try await database.tableExists(table), "\(table)") }
        #expect(try await database.query("SELECT name FROM schema_migrations ORDER BY version").map { try $0.decode(String.self, at: 0) } == ["upper", "dashed", ""])
        let status = try await cli.migrate("status", "--dir", directory.path, "--database-url", cli.databaseURL)
        #expect(status.output.contains("skipped README.md: not a .sql file"), "\(status.output)")
        #expect(status.output.contains("skipped 0002_draft.sql.bak: not a .sql file"), "\(status.output)")
        #expect(status.output.contains("skipped .#0003_lock.sql: a hidden file"), "\(status.output)")
    }
}
