import Foundation
@testable import Repository
import Testing

@Suite("Migration files")
struct MigrationFileTests {
    @Test("sections, transaction flags and lines are read from the file")
    func parsing() throws {
        let migration = try Migration(fileName: "0042_add_email.sql", contents: """
            -- A comment before the first marker is fine.
            -- migrate:up transaction:false
            CREATE INDEX CONCURRENTLY i ON t (c);

            -- migrate:down
            DROP INDEX i;
            """)
        #expect(migration.version == 42)
        #expect(migration.name == "add_email")
        #expect(migration.up == "CREATE INDEX CONCURRENTLY i ON t (c);")
        #expect(migration.down == "DROP INDEX i;")
        #expect(!migration.upRunsInTransaction)
        #expect(migration.downRunsInTransaction)
        #expect(migration.upLine == 3)
        #expect(migration.downLine == 6)
    }

    @Test("malformed files are refused with the file and line", arguments: [
        ("init.sql", "-- migrate:up\nSELECT 1;", "NNNN_name.sql"),
        ("0001_x.sql", "SELECT 1;\n-- migrate:up\nSELECT 2;", "0001_x.sql:1: SQL before the -- migrate:up marker"),
        ("0001_x.sql", "-- migrate:down\nSELECT 1;", "no -- migrate:up section"),
        ("0001_x.sql", "-- migrate:up\nSELECT 1;\n-- migrate:up\nSELECT 2;", "0001_x.sql:3: unexpected marker"),
        ("1000000000000000000_x.sql", "-- migrate:up\nSELECT 1;", "a version has at most 18 digits"),
        ("0001_x.sql", "-- migrate:up transaction:flase\nSELECT 1;", #"0001_x.sql:1: unknown option "transaction:flase" on the -- migrate:up marker"#),
        // Look-alikes dbmate takes for comments, which would run the down section as part of up.
        ("0001_x.sql", "-- migrate:up\nCREATE TABLE k (id int);\n--\u{A0}migrate:down\nDROP TABLE k;", "0001_x.sql:3: \"--\u{A0}migrate:down\" looks like a section marker but is not one"),
        ("0001_x.sql", "-- migrate:up\nCREATE TABLE k (id int);\n---- migrate:down\nDROP TABLE k;", "0001_x.sql:3: \"---- migrate:down\" looks like a section marker but is not one"),
        ("0001_x.sql", "-- migrate:up\nCREATE TABLE k (id int);\n- - MIGRATE:down\nDROP TABLE k;", "0001_x.sql:3: \"- - MIGRATE:down\" looks like a section marker"),
    ])
    func malformed(fileName: String, contents: String, expected: String) {
        let error = #expect(throws: MigrationError.self) { try Migration(fileName: fileName, contents: contents) }
        #expect(error?.message.contains(expected) == true, "\(error?.message ?? "")")
    }

    @Test("comments that name migrate: without up or down are comments, wherever they are")
    func commentsNamingMigrate() throws {
        let migration = try Migration(fileName: "0001_a.sql", contents: """
            -- Migrate: copy legacy accounts (ticket 42)
            -- migrate:up
            CREATE FUNCTION f() RETURNS void AS $$
            ---- migrate: step two, backfill
            BEGIN END $$ LANGUAGE plpgsql;
            -- migrate:down
            DROP FUNCTION f();
            """)
        #expect(migration.down == "DROP FUNCTION f();")
    }

    @Test("dbmate's markers with any blanks after the dashes, or none, as dbmate reads them")
    func markerSpacing() throws {
        for marker in ["--migrate:", "--  migrate:", "--\tmigrate:", "  -- migrate:"] {
            let migration = try Migration(fileName: "0001_a.sql", contents: "\(marker)up transaction:false\nCREATE TABLE a (id int);\n\(marker)down\nDROP TABLE a;\n")
            #expect(migration.up == "CREATE TABLE a (id int);" && migration.down == "DROP TABLE a;" && !migration.upRunsInTransaction, "\(marker)")
        }
    }

    @Test("duplicate versions are refused")
    func duplicates() throws {
        #expect(throws: MigrationError.self) {
            try Migrator([Migration(version: 1, name: "a", up: "SELECT 1"), Migration(version: 1, name: "b", up: "SELECT 2")])
        }
    }

    @Test("a new file that cannot be made says why in one line: a file where the directory should be, a name too long for the file system, a version past 18 digits, a directory that cannot be written")
    func newFileProblems() throws {
        let directory = try MigrationDirectory(["0001_a.sql": "-- migrate:up\nSELECT 1;"])
        defer { directory.remove() }
        let inTheWay = directory.path + "/0001_a.sql"
        let notDirectory = #expect(throws: MigrationError.self) { try Migrator.createFile(named: "b", in: inTheWay) }
        #expect(notDirectory?.message == "\(inTheWay) is a file, not a directory of migrations")
        let tooLong = #expect(throws: MigrationError.self) { try Migrator.createFile(named: String(repeating: "x", count: 300), in: directory.path) }
        #expect(tooLong?.message == "the file name would be 309 bytes long, more than the 255 a file name may have: give the migration a shorter name", "\(String(describing: tooLong))")
        let beneathFile = #expect(throws: MigrationError.self) { try Migrator.createFile(named: "b", in: inTheWay + "/sub") }
        #expect(beneathFile.map { !$0.message.contains("NSCocoaErrorDomain") && !$0.message.contains("\n") } == true, "\(String(describing: beneathFile))")
        // After the largest version there is: none is made that could not be read back.
        let full = try MigrationDirectory(["999999999999999999_a.sql": "-- migrate:up\nSELECT 1;"])
        defer { full.remove() }
        let overflow = #expect(throws: MigrationError.self) { try Migrator.createFile(named: "next", in: full.path) }
        #expect(overflow?.message.hasPrefix("the next version would be 1000000000000000000, over the 18 digits a version may have") == true, "\(String(describing: overflow))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: full.path) == ["999999999999999999_a.sql"])
        #if os(Linux)
        // A directory that exists but makes no files: the kernel's /proc.
        let virtual = #expect(throws: MigrationError.self) { try Migrator.createFile(named: "b", in: "/proc") }
        #expect(virtual?.message == "/proc/0001_b.sql cannot be created: this directory takes no new files", "\(String(describing: virtual))")
        #endif
    }

    @Test("new files continue the directory's numbering or timestamp style")
    func newFiles() throws {
        let directory = try MigrationDirectory()
        defer { directory.remove() }
        let first = try Migrator.createFile(named: "Create People!", in: directory.path)
        #expect(first.hasSuffix("/0001_create_people_.sql"))
        let second = try Migrator.createFile(named: "emails", in: directory.path)
        #expect(second.hasSuffix("/0002_emails.sql"))
        let parsed = try Migrator(directory: directory.path)
        #expect(parsed.migrations.map(\.version) == [1, 2])

        let stamped = try MigrationDirectory(["20240101000000_first.sql": "-- migrate:up\nSELECT 1;"])
        defer { stamped.remove() }
        let next = try Migrator.createFile(named: "second", in: stamped.path, now: Date(timeIntervalSince1970: 1_709_214_306))
        #expect(next.hasSuffix("/20240229134506_second.sql"))
        // Again within the same second, and with a clock behind the newest file: one past the newest.
        let again = try Migrator.createFile(named: "third", in: stamped.path, now: Date(timeIntervalSince1970: 1_709_214_306))
        #expect(again.hasSuffix("/20240229134507_third.sql"), "\(again)")
        let behind = try Migrator.createFile(named: "fourth", in: stamped.path, now: Date(timeIntervalSince1970: 0))
        #expect(behind.hasSuffix("/20240229134508_fourth.sql"), "\(behind)")
        #expect(try Migrator(directory: stamped.path).migrations.count == 4)
    }

    @Test("statements split at top-level semicolons only")
    func splitting() {
        let sql = """
            CREATE FUNCTION f() RETURNS trigger AS $body$ BEGIN PERFORM 1; RETURN NEW; END $body$ LANGUAGE plpgsql;
            INSERT INTO t VALUES ('a;b', 'it''s; fine', "odd;name"); -- trailing; comment
            /* block; /* nested; */ comment */ SELECT $1;
            -- only a comment;
            SELECT $$;$$
            """
        let statements = SQLStatements.split(sql)
        #expect(statements.count == 4)
        #expect(statements[0].sql.hasSuffix("LANGUAGE plpgsql"))
        #expect(statements[1].sql.hasPrefix("INSERT INTO t VALUES ('a;b', 'it''s; fine', \"odd;name\")"))
        #expect(statements[2].line == 2)
        #expect(statements[3].sql == "SELECT $$;$$")
        #expect(statements[3].line == 4)
    }

    @Test("the byte lexer: atomic bodies across comments, non-ASCII names, E'' escapes, tagged dollar quotes, CRLF lines")
    func lexing() {
        let sql = "CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN -- note\r\n ATOMIC SELECT 1; SELECT 2; END;\r\n"
            + "SELECT é$; SELECT E'it\\'s;' AS ü;\nSELECT $a$ ; $b$ ; $a$;"
        let statements = SQLStatements.split(sql)
        #expect(statements.map(\.line) == [0, 2, 2, 3])
        #expect(statements[1].sql == "SELECT é$")
        #expect(statements[2].sql == "SELECT E'it\\'s;' AS ü")
        #expect(statements[3].sql == "SELECT $a$ ; $b$ ; $a$")
    }

    @Test("a rule's parenthesized actions are one statement; comments alone after the last statement are none (a golang-migrate file ending COMMIT; /* end */)")
    func parenthesesAndTrailingComments() {
        let sql = """
            CREATE RULE r AS ON INSERT TO src DO ALSO (INSERT INTO log VALUES ('a;'); INSERT INTO log VALUES (')'));
            SELECT (1);
            COMMIT;
            /* end; */ -- done
            """
        let statements = SQLStatements.split(sql)
        #expect(statements.map(\.sql) == ["CREATE RULE r AS ON INSERT TO src DO ALSO (INSERT INTO log VALUES ('a;'); INSERT INTO log VALUES (')'))",
                                           "SELECT (1)", "COMMIT"])
        #expect(SQLStatements.split("/* only */ ; -- a comment\n;").isEmpty)
    }

    @Test("an expression's problem is named: unclosed quote, comment or dollar quote, a stray ) or ;")
    func expressions() {
        #expect(SQLStatements.expressionProblem("name = 'a''") == "an unclosed '")
        #expect(SQLStatements.expressionProblem("name = $$x") == "an unclosed dollar-quoted body")
        #expect(SQLStatements.expressionProblem("name = 'x' /* c") == "an unclosed /* comment")
        #expect(SQLStatements.expressionProblem("a) OR (b") == "a ) without its (")
        #expect(SQLStatements.expressionProblem("a; DROP TABLE t") == "a ;")
        #expect(SQLStatements.expressionProblem("(a) OR (b = ';' AND c = $1) -- ) ;") == nil)
        #expect(SQLStatements.expressionProblem("") == "no expression at all")
        #expect(SQLStatements.expressionProblem("  -- a comment\n /* and another */ ") == "no expression at all")
    }
}
