import Foundation
@testable import Repository
import Testing

/// The `live` schema the library installs: versioned and idempotent, once under concurrent
/// installs, keys from any primary key, and an upgrade of the address book's old migrations
/// with no change unannounced.
@Suite("Live schema")
struct LiveSchemaTests {
    static let oldMigrations = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("OldDemoMigrations").path

    func triggers(_ table: String, on database: Database) async throws -> [String] {
        try await database.query("""
            SELECT tgrelid::regclass::text || ':' || tgname || ':' || encode(tgargs, 'escape') FROM pg_trigger
            WHERE tgrelid::regclass::text LIKE $1 AND NOT tgisinternal ORDER BY 1
            """, [table]).map { try $0.decode(String.self, at: 0) }
    }

    @Test("install is versioned and idempotent; four processes installing at once install it once")
    func concurrentInstall() async throws {
        let database = try await TestServer.makeDatabase()
        #expect(try await LiveSchema.installedVersion(on: database) == nil)
        let url = try await TestServer.connectionString(database: database.name())
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("migrate").path
        let installs = try (0..<4).map { _ in try ChildProcess(executable, ["live", "install", "--database-url", url], environment: [:]) }
        var outputs: [String] = []
        for install in installs {
            let completion = await install.completion()
            outputs.append(String(decoding: completion.output, as: UTF8.self))
            #expect(completion.status == 0, "\(outputs.last ?? "")")
        }
        #expect(outputs.filter { $0.contains("Installed live schema version \(LiveSchema.version)") }.count == 1, "\(outputs)")
        #expect(outputs.filter { $0.contains("up to date") }.count == 3, "\(outputs)")
        #expect(try await database.query("SELECT count(*) FROM live.schema_version")[0].decode(Int.self, at: 0) == 1)
        #expect(try await LiveSchema.install(on: database) == false)
        #expect(try await LiveSchema.installedVersion(on: database) == LiveSchema.version)
    }

    @Test("any primary key: a text key, a composite key, keys that change; never row data; a table without a key is refused")
    func keys() async throws {
        let database = try await TestServer.makeDatabase()
        try await database.withConnection { connection in
            try await connection.execute(script: """
                CREATE TABLE accounts (user_id text PRIMARY KEY, secret text);
                CREATE TABLE members (project_id bigint, user_id text, role text, PRIMARY KEY (project_id, user_id));
                CREATE TABLE loose (a int, b text);
                CREATE TABLE stamped (at timestamptz PRIMARY KEY);
                CREATE VIEW account_names AS SELECT user_id AS id FROM accounts;
                CREATE MATERIALIZED VIEW member_roles AS SELECT project_id AS id, role FROM members;
                """)
        }
        // A view has no key to give: the message says what to do instead, not to add one.
        for (name, kind) in [("account_names", "is a view"), ("member_roles", "is a materialized view")] {
            let view = await #expect(throws: PostgresError.self) { try await LiveSchema.enable(name, on: database) }
            #expect(view?.message.contains(kind) == true && view?.message.contains("readAll(_:sql:)") == true, "\(String(describing: view))")
            struct Named: Record { static let tableName = "account_names"; var id: String }
            if name == "account_names" {
                let read = await #expect(throws: PostgresError.self) { try await LiveRepository(database).read(Named.self, id: "ada") }
                #expect(read?.message.contains("is a view") == true && read?.message.contains("ADD PRIMARY KEY") == false, "\(String(describing: read))")
            }
        }
        try await LiveSchema.enable("accounts", on: database)
        try await LiveSchema.enable("members", on: database)
        let noKey = await #expect(throws: PostgresError.self) { try await LiveSchema.enable("loose", on: database) }
        #expect(noKey?.message.contains("has no primary key") == true)
        let badKey = await #expect(throws: PostgresError.self) { try await LiveSchema.enable("stamped", on: database) }
        #expect(badKey?.message.contains("at timestamp with time zone") == true)
        let listener = try await RawListener(database: database.name(), channel: "live_changes")
        try await database.query("INSERT INTO accounts VALUES ('ada', 'the secret')")
        try await database.query("INSERT INTO members VALUES (7, 'ada', 'owner'), (7, 'grace', 'viewer')")
        try await database.query("UPDATE members SET user_id = 'lin' WHERE user_id = 'grace'")
        let expected: [(String, String, [ChangeKey])] = [
            ("public.accounts", "insert", [.text("ada")]),
            ("public.members", "insert", [.composite([.integer(7), .text("ada")]), .composite([.integer(7), .text("grace")])]),
            ("public.members", "update", [.composite([.integer(7), .text("lin")])]),
            ("public.members", "delete", [.composite([.integer(7), .text("grace")])]),
        ]
        struct Payload: Decodable { var table: String; var op: String; var keys: [ChangeKey] }
        for (table, op, keys) in expected {
            let text = try #require(listener.next())
            #expect(!text.contains("secret") && !text.contains("owner"), "a payload must never carry row data: \(text)")
            let payload = try JSONDecoder().decode(Payload.self, from: Data(text.utf8))
            #expect(payload.table == table && payload.op == op && payload.keys == keys, "\(text)")
        }
        #expect(ChangeKey.composite([.integer(7), .text("ada")]).description == KeyText.text(of: Membership.Key(projectId: 7, userId: "ada")))
    }

    @Test("each statement's NOTIFY carries table, op, keys and the writing transaction only; a changed key is announced gone")
    func changeNotifications() async throws {
        let database = try await TestServer.makeDatabase()
        try await migrateProject(database)
        let listener = try await RawListener(database: database.name(), channel: "live_changes")
        func run(_ sql: String, _ values: [any SQLValueConvertible]) async throws -> (id: Int, version: Int64) {
            let row = try await database.query(sql + " RETURNING id, pg_current_xact_id()::xid::text::bigint, xmin::text::bigint", values)[0]
            return (try row.decode(Int.self, at: 0), try row.decode(Int64.self, at: 1))
        }

        let insert = try await run("INSERT INTO people (name) VALUES ($1)", ["Ada; DROP TABLE people"])
        let id = insert.id
        let update = try await run("UPDATE people SET name = $1 WHERE id = $2", ["Ada Lovelace", id])
        #expect(try await database.query("SELECT xmin::text::bigint FROM people WHERE id = $1", [id])[0].decode(Int64.self, at: 0) == update.version)
        let rekey = try await run("UPDATE people SET id = $1 WHERE id = $2", [id + 100, id])  // a new key: the old one is gone
        let delete = try await run("DELETE FROM people WHERE id = $1", [id + 100])
        #expect(Set([insert.version, update.version, rekey.version, delete.version]).count == 4)

        struct Payload: Decodable, Equatable { var table: String; var op: String; var keys: [Int]; var version: Int64; var more: Bool? }
        var payloads: [Payload] = []
        for _ in 0..<5 {
            let text = try #require(listener.next())
            #expect(!text.contains("Ada"), "a payload must never carry row data: \(text)")
            payloads.append(try JSONDecoder().decode(Payload.self, from: Data(text.utf8)))
        }
        #expect(payloads == [
            Payload(table: "public.people", op: "insert", keys: [id], version: insert.version),
            Payload(table: "public.people", op: "update", keys: [id], version: update.version),
            Payload(table: "public.people", op: "update", keys: [id + 100], version: rekey.version, more: true),
            Payload(table: "public.people", op: "delete", keys: [id], version: rekey.version),
            Payload(table: "public.people", op: "delete", keys: [id + 100], version: delete.version),
        ])
    }

    @Test("a key too long to announce fails its statement with an error saying so, rather than going unannounced")
    func longKey() async throws {
        let database = try await TestServer.makeDatabase()
        try await database.query("CREATE TABLE notes (title text PRIMARY KEY)")
        try await LiveSchema.enable("notes", on: database)
        try await database.query("INSERT INTO notes VALUES ($1)", [String(repeating: "n", count: 6_000)])
        let error = await #expect(throws: PostgresError.self) {
            try await database.query("INSERT INTO notes VALUES ($1)", [String(repeating: "x", count: 9_000)])
        }
        #expect(error?.message.contains("change announcements carry keys of at most 7,000") == true)
        #expect(try await database.query("SELECT count(*) FROM notes")[0].decode(Int.self, at: 0) == 1)
    }

    @Test("partitions get the triggers too, announcing as the partitioned table")
    func partitions() async throws {
        let database = try await TestServer.makeDatabase()
        try await database.withConnection { connection in
            try await connection.execute(script: """
                CREATE TABLE parts (id bigint PRIMARY KEY, name text) PARTITION BY RANGE (id);
                CREATE TABLE parts_low PARTITION OF parts FOR VALUES FROM (0) TO (100);
                CREATE TABLE parts_high PARTITION OF parts FOR VALUES FROM (100) TO (1000) PARTITION BY RANGE (id);
                CREATE TABLE parts_high_a PARTITION OF parts_high FOR VALUES FROM (100) TO (500);
                """)
        }
        try await LiveSchema.enable("parts", on: database)
        let updates = try await triggers("parts%", on: database).filter { $0.contains("live_announce_update") }
        #expect(updates == ["parts", "parts_high", "parts_high_a", "parts_low"].map { "\($0):live_announce_update:public.parts\\000" })
        let listener = try await RawListener(database: database.name(), channel: "live_changes")
        try await database.query("INSERT INTO parts VALUES (150, 'deep')")
        #expect(try #require(listener.next()).contains(#""table":"public.parts""#))
        try await LiveSchema.disable("parts", on: database)
        #expect(try await triggers("parts%", on: database).isEmpty)
    }
}

/// A record keyed by two columns, for the tests.
struct Membership: Record, Equatable {
    static let tableName = "members"
    struct Key: Hashable, Codable, Sendable, Comparable {
        var projectId: Int64
        var userId: String
        static func < (a: Key, b: Key) -> Bool { (a.projectId, a.userId) < (b.projectId, b.userId) }
    }
    var projectId: Int64
    var userId: String
    var role: String
    var id: Key { Key(projectId: projectId, userId: userId) }
}
