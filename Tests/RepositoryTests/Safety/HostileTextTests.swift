import AddressBookKit
import Foundation
@testable import Repository
import Testing

/// Untrusted text — names from the database, notification payloads — reaches a terminal
/// escaped; floods stay quiet; odd identifiers and conditions are handled.
@Suite("Hostile text")
struct HostileTextTests {
    @Test("control characters and bidirectional overrides are escaped, and long text is capped")
    func escaping() {
        #expect(TerminalText.escaped("\u{1B}]0;pwned\u{07}ok") == "\\u{1b}]0;pwned\\u{7}ok")
        #expect(TerminalText.escaped("abc\u{202E}fed\u{2066}x\u{200F}") == "abc\\u{202e}fed\\u{2066}x\\u{200f}")
        #expect(TerminalText.escaped("שלום مرحبا") == "שלום مرحبا", "right-to-left text itself is shown as it is")
        #expect(TerminalText.escaped("a\r\nb\u{9B}c") == "a\\u{d}\\u{a}b\\u{9b}c")
        #expect(TerminalText.escaped(String(repeating: "x", count: 10), limit: 4) == "xxxx…")
        #expect(TerminalText.escaped("Ada Lovelace é 🚢") == "Ada Lovelace é 🚢")
        #expect(TerminalText.escaped("a\u{2028}b\u{2029}c") == "a\\u{2028}b\\u{2029}c", "line and paragraph separators")
        #expect(TerminalText.escaped("hi\u{E0001}\u{E0069}\u{E007F}") == "hi\\u{e0001}\\u{e0069}\\u{e007f}", "hidden tag characters")
        // Characters that show as nothing: two names that look alike show apart (a stranger's run).
        #expect(TerminalText.escaped("a\u{200B}b\u{FEFF}c\u{AD}d\u{2060}e\u{3164}f") == "a\\u{200b}b\\u{feff}c\\u{ad}d\\u{2060}e\\u{3164}f")
        #expect(TerminalText.escaped("\u{1F469}\u{200D}\u{1F4BB} \u{645}\u{200C}\u{647}") == "\u{1F469}\u{200D}\u{1F4BB} \u{645}\u{200C}\u{647}", "the joiners stay: emoji and scripts need them")
    }

    @Test("ignored notifications: the first of a window is logged, the rest summarised once")
    func floodDigest() {
        var digest = IgnoredNotifications()
        let start = ContinuousClock.now
        var lines: [IgnoredNotifications.Line] = []
        for index in 0..<20_000 {
            lines += digest.record(payload: "junk \(index)\u{1B}[2J", reason: "invalid JSON", at: start + .milliseconds(index / 10))
        }
        lines += digest.flush(at: start + .seconds(10))
        #expect(lines.count <= 4, "\(lines)")
        #expect(lines.contains { $0.metadata["count"] != nil })
        #expect(!"\(lines)".contains("\u{1B}"))
    }

    @Test("demo prints names with ESC, BEL, CR and C1 controls escaped; --json stays exact JSON, with every control escaped")
    func demoEscapes() async throws {
        let database = try await TestServer.makeDatabase()
        let demo = DemoProcess(environment: ["DATABASE_URL": try await TestServer.connectionString(database: database.name())])
        let name = "Eve\r\u{1B}]0;pwned\u{07}X\u{9B}2J\u{9D}0;t\u{9C}\u{7F}"
        let added = try await demo.json(AddressBookKit.Person.self, "add", name, "--json")
        #expect(added.name == name)
        let list = try await demo.run("list")
        #expect(!list.output.contains("\u{1B}") && !list.output.contains("\u{07}") && !list.output.contains("\r"))
        #expect(list.output.contains("Eve\\u{d}\\u{1b}]0;pwned\\u{7}X"), "\(list.output)")
        #expect(try await demo.json([AddressBookKit.Person].self, "list", "--json").first?.name == name)
        let raw = try await demo.run("list", "--json").output
        #expect(!raw.unicodeScalars.contains { (0x7F...0x9F).contains($0.value) || ($0.value < 0x20 && $0 != "\n") }, "\(raw.debugDescription)")
    }

    @Test("demo db shows a data directory holding control characters escaped; every db command takes --json")
    func demoDatabaseCommands() async throws {
        let directory = NSTemporaryDirectory() + "demo-\u{1B}[2J-\(UInt32.random(in: 0...UInt32.max))"
        let demo = DemoProcess(environment: ["DEMO_DATA_DIRECTORY": directory])
        for command in [["db", "status"], ["db", "stop"]] {
            let run = try await demo.run(command)
            #expect(!run.output.contains("\u{1B}") && run.output.contains("demo-\\u{1b}[2J-"), "\(command): \(run.output.debugDescription)")
            let json = try await demo.run(command + ["--json"])
            #expect(json.status == 0 && json.output.hasPrefix("{") && !json.output.contains("\u{1B}"), "\(command) --json: \(json.output.debugDescription)")
        }
        let reset = try await demo.run(["db", "reset", "--json"])
        #expect(reset.status == 0 && reset.output.contains("\"deleted\""), "\(reset.output)")
    }

    @Test("a watch survives a forged payload with ESC and a flood of 20,000: stderr stays escaped and short")
    func watchFlood() async throws {
        let database = try await TestServer.makeDatabase()
        let demo = DemoProcess(environment: ["DATABASE_URL": try await TestServer.connectionString(database: database.name())])
        _ = try await demo.run("add", "Ada")
        let (watcher, lines) = try demo.start("watch", "--json")
        defer { if watcher.exitStatusIfExited() == nil { kill(watcher.pid, SIGKILL); _ = watcher.wait() } }
        #expect(try await eventually(timeout: .seconds(30)) { lines.count >= 1 })
        try await database.query("SELECT pg_notify('live_changes', E'\\x1b[2J\\x1b]0;forged\\x07')")
        try await database.query("SELECT pg_notify('live_changes', 'junk ' || n) FROM generate_series(1, 20000) n")
        _ = try await demo.run("add", "Grace")  // after the flood: once it shows, the flood was read
        #expect(try await eventually(timeout: .seconds(60)) { lines.all.last?.contains("Grace") == true })
        kill(watcher.pid, SIGINT)
        let errors = String(decoding: await watcher.completion().errors, as: UTF8.self)
        #expect(!errors.contains("\u{1B}") && !errors.contains("\u{07}"), "\(errors)")
        #expect(errors.split(separator: "\n").count <= 20,  // 2 per 5 s: a slow machine takes longer over 20,000
                "\(errors.split(separator: "\n").count) lines: \(errors.prefix(2000))")
    }

    struct Injected: Record, Equatable {
        static let tableName = "people; DROP TABLE x; --"
        var id: Int64
    }

    struct Missing: Record, Equatable {
        static let tableName = "nowhere.\"no \u{1B}table\""
        var id: Int64
    }

    @Test("a tableName that is no table gets one line naming it as spelled, not the library's catalog query")
    func tableNameNoTable() async throws {
        let database = try await makeContactsDatabase()
        let repository = LiveRepository(database)
        defer { repository.close() }
        for (read, expected) in [({ _ = try await repository.read(Injected.self, id: 1) }, #"Injected.tableName "people; DROP TABLE x; --" names no table"#),
                                 ({ _ = try await repository.read(Missing.self, id: 1) }, #"Missing.tableName "nowhere.\"no \u{1b}table\"" names no table"#)]
            as [(() async throws -> Void, String)] {
            let error = await #expect(throws: PostgresError.self) { try await read() }
            let line = error.map { "\($0)" } ?? ""
            #expect(line.hasPrefix(expected) && !line.contains("\n") && !line.contains("SELECT") && !line.contains("\u{1B}"), "\(line)")
        }
        let enabled = await #expect(throws: PostgresError.self) { try await LiveSchema.enable("people; DROP TABLE x; --", on: database) }
        #expect(enabled.map { "\($0)" }?.hasPrefix(#"table "people; DROP TABLE x; --" names no table"#) == true, "\(String(describing: enabled))")
    }

    struct Weird: Record, Equatable {
        static let tableName = "\"we\nird\""
        var id: Int64
        var n: Int
    }

    @Test("a server's message quoting a name with a newline (no primary key; a check constraint a write breaks) is one line")
    func serverMessagesOneLine() async throws {
        let database = try await makeContactsDatabase()
        try await database.withConnection { try await $0.execute(script: """
            CREATE TABLE "no\npk" (id bigint, v text);
            CREATE TABLE "we\nird" (id bigint PRIMARY KEY, n int NOT NULL CONSTRAINT "chk\nx" CHECK (n < 10));
            INSERT INTO "we\nird" VALUES (1, 1);
            """) }
        let enabled = await #expect(throws: PostgresError.self) { try await LiveSchema.enable("\"no\npk\"", on: database) }
        let line = enabled.map { "\($0)" } ?? ""
        #expect(line.contains("has no primary key") && !line.contains("\n"), "\(line)")
        try await LiveSchema.enable("\"we\nird\"", on: database)
        let repository = LiveRepository(database)
        defer { repository.close() }
        let row = try await repository.read(Weird.self, id: 1)
        row[\.n].value = 11
        let refused = await #expect(throws: LiveRecordError.self) { try await row.save() }
        let written = refused.map { "\($0)" } ?? ""
        #expect(written.contains(#"violates check constraint "chk\u{a}x""#) && !written.contains("\n"), "\(written)")
    }

    @Test("errors show a table or key that is not plain quoted, with controls escaped")
    func namesInMessages() {
        let error = LiveRecordError.notFound(table: "public.odd name", key: "a\u{1B}\"b")
        #expect(error.description == #"no row in "public.odd name" has id "a\u{1b}\"b""#, "\(error)")
        #expect(LiveRecordError.deleted(table: "public.people", key: "42").description.hasPrefix("public.people row 42 "))
        // A live SQL query's tables: a list of shown names stays a list; a quoted name holding a
        // comma is not split.
        let failure = PostgresError(.server, "boom")
        #expect(LiveRecordError.refreshFailed(table: "public.orders, public.people", failure).description
                .hasPrefix("re-reading changed rows of public.orders, public.people failed: "))
        #expect(LiveRecordError.refreshFailed(table: #"public."a, b", public.people"#, failure).description
                .hasPrefix(#"re-reading changed rows of public."a, b", public.people failed: "#))
        // A feed that cannot follow (a role without REPLICATION) did not lose a connection.
        let misconfigured = LiveRecordError.changeFeedDisconnected(PostgresError(.invalidConfiguration, "role app lacks the REPLICATION attribute"))
        #expect(misconfigured.description == "the change feed cannot follow changes, and tries again: role app lacks the REPLICATION attribute", "\(misconfigured)")
        // Nor did one the server refused (every replication slot in use), or one it could not open.
        for kind in [PostgresError.Kind.server, .connectionFailed] {
            let refused = LiveRecordError.changeFeedDisconnected(PostgresError(kind, "all replication slots are in use"))
            #expect(refused.description == "the change feed could not start following changes, and tries again: all replication slots are in use", "\(refused)")
        }
        let lost = LiveRecordError.changeFeedDisconnected(PostgresError(.connectionLost, "server closed the connection"))
        #expect(lost.description == "the change feed lost its connection and is reconnecting: server closed the connection", "\(lost)")
    }

    struct OddRow: Record, Equatable {
        static let tableName = "\"odd.name\""
        var id: Int64
        var name: String
    }

    @Test("a table whose name holds a dot works live: read, write through, follow, query; messages quote it as psql does")
    func dottedTableName() async throws {
        let database = try await makeContactsDatabase()
        try await database.query(#"CREATE TABLE "odd.name" (id bigint PRIMARY KEY, name text NOT NULL, version bigint NOT NULL DEFAULT 1)"#)
        try await database.query(#"SELECT live.enable_change_notifications('"odd.name"')"#)
        try await database.query(#"INSERT INTO "odd.name" (id, name) VALUES (1, 'one'), (2, 'two')"#)
        let repository = LiveRepository(database)
        let one = try await repository.read(OddRow.self, id: 1)
        let all = try await repository.readAll(OddRow.self, orderBy: [.ascending(\.name)])
        one[\.name].value = "uno"
        try await one.save()
        #expect(try await database.query(#"SELECT name FROM "odd.name" WHERE id = 1"#)[0].decode(String.self, at: 0) == "uno")
        try await psql(#"UPDATE "odd.name" SET name = 'dos' WHERE id = 2"#, database: database)
        #expect(try await eventually { all.value.map(\.name) == ["dos", "uno"] })
        #expect(SQLIdentifier.quoted(qualified: #"crm."odd.name""#) == #""crm"."odd.name""#)
        // Named apart from a table `name` in a schema `public.odd`.
        let missing = await #expect(throws: LiveRecordError.self) { try await repository.read(OddRow.self, id: 3) }
        #expect(missing.map { "\($0)" } == #"no row in public."odd.name" has id 3"#)
        repository.close()
    }

    @Test("a quote followed by a combining mark cannot end a quoted identifier (quoting is by Unicode scalar)")
    func identifierQuoteWithCombiningMark() async throws {
        let name = "x\"\u{301}; DROP TABLE victim; --"
        #expect(Array(SQLIdentifier.quoted(name).unicodeScalars) == Array("\"x\"\"\u{301}; DROP TABLE victim; --\"".unicodeScalars))
        #expect(SQLIdentifier.parts(of: SQLIdentifier.quoted(name) + ".b").map(\.isQuoted) == [true, false])
        let database = try await TestServer.makeDatabase()
        try await database.query("CREATE TABLE victim (id int)")
        try await database.query("CREATE TABLE \(SQLIdentifier.quoted(name)) (id int)")
        let names = try await database.query("SELECT relname FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace ORDER BY relname")
            .map { try $0.decode(String.self, at: 0) }
        #expect(names.map { Array($0.unicodeScalars) }.sorted { $0.lexicographicallyPrecedes($1) }
                == [name, "victim"].map { Array($0.unicodeScalars) }.sorted { $0.lexicographicallyPrecedes($1) })
    }

    @Test("a where: condition that would escape its parentheses is refused")
    func conditionCannotEscape() async throws {
        let database = try await makeContactsDatabase()
        let repository = LiveRepository(database)
        // The last: a quote followed by a combining mark is a quote to PostgreSQL (read by
        // scalar), though one Character to Swift.
        for condition in ["name = $1) OR (true", "true; DROP TABLE contacts", "(name = $1", "name = 'x", "name = 'x'\u{301}) OR (name = '\u{301}'"] {
            let error = await #expect(throws: PostgresError.self) {
                _ = try await repository.readAll(Contact.self, where: condition, parameters: ["Ada"])
            }
            #expect(error?.kind == .invalidStatement, "\(condition)")
        }
        let fine = try await repository.readAll(Contact.self, where: "name = $1 OR name = ')' OR name = E'(\\'' OR name = '\"\u{301}'", parameters: ["Ada"])
        #expect(fine.value.map(\.name) == ["Ada"])
        // `$2` with one parameter would stand for the ids a membership check adds.
        let past = await #expect(throws: PostgresError.self) {
            _ = try await repository.readAll(Contact.self, where: "name = $1 OR id = ANY($2)", parameters: ["Ada"])
        }
        #expect(past?.message == "the where: condition uses $2, but 1 parameter was given", "\(String(describing: past))")
        let huge = await #expect(throws: PostgresError.self) {
            _ = try await repository.readAll(Contact.self, where: "$99999999999999999999 = 1", parameters: ["Ada"])
        }
        #expect(huge?.message.hasPrefix("the where: condition uses $9223372036854775807…, but 1 parameter") == true, "\(String(describing: huge))")
        // A subquery's rows are not followed: the list would drift silently.
        for condition in ["id IN (SELECT id FROM contacts WHERE name = $1)", "EXISTS (select 1)", "id IN (TABLE ids)"] {
            let error = await #expect(throws: PostgresError.self) {
                _ = try await repository.readAll(Contact.self, where: condition, parameters: ["Ada"])
            }
            #expect(error?.message.hasPrefix("the where: condition has a subquery") == true, "\(condition): \(String(describing: error))")
        }
        _ = try await repository.readAll(Contact.self, where: "name = 'select' OR name = 'table' OR name = $1", parameters: ["Ada"])
        repository.close()
    }

    @Test("migrate: a failing migration's long RAISE message still leaves its SQLSTATE and statement on its one line")
    func longServerMessage() async throws {
        let database = try await TestServer.makeDatabase()
        defer { database.close() }
        let url = try await TestServer.connectionString(database: database.name())
        let directory = try MigrationDirectory(["0001_fails.sql": "-- migrate:up\nDO $$ BEGIN RAISE EXCEPTION '%', repeat('x', 1000); END $$;\n"])
        defer { directory.remove() }
        let migrate = URL(fileURLWithPath: DemoProcess.executable).deletingLastPathComponent().appendingPathComponent("migrate").path
        let child = try ChildProcess(migrate, ["up", "--dir", directory.path, "--database-url", url], environment: ProcessInfo.processInfo.environment)
        let completion = await child.completion()
        let errors = String(decoding: completion.errors, as: UTF8.self)
        #expect(completion.status != 0)
        #expect(errors.split(separator: "\n").count == 1, "\(errors)")
        #expect(errors.contains("(SQLSTATE P0001)") && errors.contains("RAISE EXCEPTION"), "\(errors)")
    }

    @Test("an argument that is not valid UTF-8 is refused, not stored as U+FFFD")
    func invalidUTF8Argument() async throws {
        let database = try await TestServer.makeDatabase()
        let url = try await TestServer.connectionString(database: database.name())
        let child = try ChildProcess("/bin/sh", ["-c", #""$0" add "$(printf '\377\376')""#, DemoProcess.executable],
                                     environment: ProcessInfo.processInfo.environment.merging(["DATABASE_URL": url]) { $1 })
        let completion = await child.completion()
        let errors = String(decoding: completion.errors, as: UTF8.self)
        #expect(completion.status != 0)
        #expect(errors.contains("not valid UTF-8"), "\(errors)")
        // The demo stopped before connecting: it did not even create its tables.
        #expect(try await database.query("SELECT count(*) FROM pg_tables WHERE tablename = 'people'")[0].decode(Int.self, at: 0) == 0)
    }
}
