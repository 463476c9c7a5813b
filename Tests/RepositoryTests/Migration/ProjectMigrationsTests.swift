import Foundation
import Repository
import Testing

/// The repository's own Migrations/: the change-notification helper and the address book.
@Suite("Project migrations")
struct ProjectMigrationsTests {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Migrations").path

    @Test("apply, roll back and apply again")
    func roundTrip() async throws {
        let database = try await TestServer.makeDatabase()
        let migrator = try Migrator(directory: Self.directory)
        #expect(try await migrator.migrate(database).map(\.version) == [1, 2, 3, 4, 5])
        try await migrator.rollback(database, steps: 5)
        #expect(try await !database.tableExists("people"))
        #expect(try await migrator.migrate(database).count == 5)
        try await migrator.validate(database)
    }

    @Test("0003 turns integer address ids into UUIDs and back, keeping them")
    func addressIDs() async throws {
        let database = try await TestServer.makeDatabase()
        let migrator = try Migrator(directory: Self.directory)
        try await migrator.migrate(database, to: 2)
        try await database.query("INSERT INTO people (id, name) VALUES (1, 'Ada')")
        try await database.query("INSERT INTO addresses (id, person_id, position, street) VALUES (42, 1, 0, 'London')")
        try await migrator.migrate(database)
        #expect(try await database.query("SELECT id::text FROM addresses")[0].decode(String.self, at: 0) == "00000000-0000-0000-0000-00000000002a")
        try await database.query("INSERT INTO addresses (person_id, position, street) VALUES (1, 1, 'Ockham')")  // default id
        try await migrator.rollback(database, to: 2)
        #expect(try await database.query("SELECT id FROM addresses WHERE street = 'London'")[0].decode(Int64.self, at: 0) == 42)
        try await database.query("INSERT INTO addresses (person_id, position, street) VALUES (1, 2, 'Horsley')")  // identity again
    }

    @Test("each statement's NOTIFY carries table, op, keys and the writing transaction only; a changed key is announced gone")
    func changeNotifications() async throws {
        let database = try await TestServer.makeDatabase()
        try await Migrator(directory: Self.directory).migrate(database)
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

    @Test("0004 switches tables with per-row announcements to per-statement ones, 0005 drops the version trigger; and back")
    func upgrade() async throws {
        let database = try await TestServer.makeDatabase()
        let migrator = try Migrator(directory: Self.directory)
        try await migrator.migrate(database, to: 3)
        func triggers() async throws -> [String] {
            try await database.query("SELECT tgname FROM pg_trigger WHERE tgrelid = 'people'::regclass AND NOT tgisinternal ORDER BY tgname")
                .map { try $0.decode(String.self, at: 0) }
        }
        let perStatement = ["live_announce_delete", "live_announce_insert", "live_announce_truncate", "live_announce_update"]
        #expect(try await triggers() == ["live_bump_version", "live_notify_change"])
        try await migrator.migrate(database, to: 4)
        #expect(try await triggers() == perStatement + ["live_bump_version"])
        try await migrator.migrate(database)
        #expect(try await triggers() == perStatement)
        try await migrator.rollback(database, steps: 1)
        #expect(try await triggers() == perStatement + ["live_bump_version"])
        try await migrator.rollback(database, steps: 1)
        #expect(try await triggers() == ["live_bump_version", "live_notify_change"])
    }

    @Test("0005 puts the triggers on every partition, naming the partitioned table; rolling back takes them off again")
    func partitions() async throws {
        let database = try await TestServer.makeDatabase()
        let migrator = try Migrator(directory: Self.directory)
        try await migrator.migrate(database, to: 4)
        try await database.withConnection { connection in
            try await connection.execute(script: """
                CREATE TABLE parts (id bigint PRIMARY KEY, name text, version bigint NOT NULL DEFAULT 1) PARTITION BY RANGE (id);
                CREATE TABLE parts_low PARTITION OF parts FOR VALUES FROM (0) TO (100);
                CREATE TABLE parts_high PARTITION OF parts FOR VALUES FROM (100) TO (1000) PARTITION BY RANGE (id);
                CREATE TABLE parts_high_a PARTITION OF parts_high FOR VALUES FROM (100) TO (500);
                SELECT live.enable_change_notifications('parts');
                """)
        }
        func announcing() async throws -> [String] {
            try await database.query("""
                SELECT tgrelid::regclass::text || ':' || encode(tgargs, 'escape') FROM pg_trigger
                WHERE tgname = 'live_announce_update' AND tgrelid::regclass::text LIKE 'parts%' ORDER BY 1
                """).map { try $0.decode(String.self, at: 0) }
        }
        #expect(try await announcing() == ["parts:"])
        try await migrator.migrate(database)
        #expect(try await announcing() == ["parts:public.parts\\000", "parts_high:public.parts\\000", "parts_high_a:public.parts\\000", "parts_low:public.parts\\000"])
        try await migrator.rollback(database, steps: 1)
        #expect(try await announcing() == ["parts:"])
        try await database.query("UPDATE parts SET name = 'after' WHERE id = 1")  // 0004's triggers work again
    }

    @Test("rolling 0005 back refuses, naming the table, while an announced table has no version column")
    func rollbackNeedsVersionColumns() async throws {
        let database = try await TestServer.makeDatabase()
        let migrator = try Migrator(directory: Self.directory)
        try await migrator.migrate(database)
        try await database.query("CREATE TABLE notes (id bigint PRIMARY KEY, body text)")
        try await database.query("SELECT live.enable_change_notifications('notes')")
        let error = await #expect(throws: (any Error).self) { try await migrator.rollback(database, steps: 1) }
        #expect("\(error.map { "\($0)" } ?? "")".contains("table notes has no version column"))
        try await database.query("ALTER TABLE notes ADD COLUMN version bigint NOT NULL DEFAULT 1")
        try await migrator.rollback(database, steps: 1)
        try await database.query("UPDATE notes SET body = 'x'")  // the version trigger is back, and finds its column
    }
}
