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
        #expect(try await migrator.migrate(database).map(\.version) == [1, 2, 3, 4])
        try await migrator.rollback(database, steps: 4)
        #expect(try await !database.tableExists("people"))
        #expect(try await migrator.migrate(database).count == 4)
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
        try await migrator.rollback(database, steps: 2)
        #expect(try await database.query("SELECT id FROM addresses WHERE street = 'London'")[0].decode(Int64.self, at: 0) == 42)
        try await database.query("INSERT INTO addresses (person_id, position, street) VALUES (1, 2, 'Horsley')")  // identity again
    }

    @Test("plain-SQL updates bump the version; each statement's NOTIFY carries table, op, keys and versions only")
    func changeNotifications() async throws {
        let database = try await TestServer.makeDatabase()
        try await Migrator(directory: Self.directory).migrate(database)
        let listener = try await RawListener(database: database.name(), channel: "live_changes")

        let id = try await database.query("INSERT INTO people (name) VALUES ($1) RETURNING id", ["Ada; DROP TABLE people"])[0].decode(Int.self, at: 0)
        try await database.query("UPDATE people SET name = $1 WHERE id = $2", ["Ada Lovelace", id])
        try await database.query("UPDATE people SET name = $1, version = 99 WHERE id = $2", ["Countess", id])
        #expect(try await database.query("SELECT version FROM people WHERE id = $1", [id])[0].decode(Int.self, at: 0) == 3)
        try await database.query("UPDATE people SET id = $1 WHERE id = $2", [id + 100, id])  // a new key: the old one is gone
        try await database.query("DELETE FROM people WHERE id = $1", [id + 100])

        struct Payload: Decodable, Equatable { var table: String; var op: String; var keys: [Int]; var versions: [Int] }
        var payloads: [Payload] = []
        for _ in 0..<6 {
            let text = try #require(listener.next())
            #expect(!text.contains("Ada") && !text.contains("Countess"), "a payload must never carry row data: \(text)")
            payloads.append(try JSONDecoder().decode(Payload.self, from: Data(text.utf8)))
        }
        #expect(payloads == [
            Payload(table: "public.people", op: "insert", keys: [id], versions: [1]),
            Payload(table: "public.people", op: "update", keys: [id], versions: [2]),
            Payload(table: "public.people", op: "update", keys: [id], versions: [3]),
            Payload(table: "public.people", op: "delete", keys: [id], versions: [3]),
            Payload(table: "public.people", op: "update", keys: [id + 100], versions: [4]),
            Payload(table: "public.people", op: "delete", keys: [id + 100], versions: [4]),
        ])
    }

    @Test("0004 switches tables with per-row announcements to per-statement ones, and back")
    func upgrade() async throws {
        let database = try await TestServer.makeDatabase()
        let migrator = try Migrator(directory: Self.directory)
        try await migrator.migrate(database, to: 3)
        func triggers() async throws -> [String] {
            try await database.query("SELECT tgname FROM pg_trigger WHERE tgrelid = 'people'::regclass AND NOT tgisinternal ORDER BY tgname")
                .map { try $0.decode(String.self, at: 0) }
        }
        #expect(try await triggers() == ["live_bump_version", "live_notify_change"])
        try await migrator.migrate(database)
        #expect(try await triggers() == ["live_announce_delete", "live_announce_insert", "live_announce_truncate", "live_announce_update", "live_bump_version"])
        try await migrator.rollback(database, steps: 1)
        #expect(try await triggers() == ["live_bump_version", "live_notify_change"])
    }
}
