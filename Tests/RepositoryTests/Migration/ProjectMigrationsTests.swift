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
        #expect(try await migrator.migrate(database).map(\.version) == [1, 2, 3])
        try await migrator.rollback(database, steps: 3)
        #expect(try await !database.tableExists("people"))
        #expect(try await migrator.migrate(database).count == 3)
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
        try await migrator.rollback(database, steps: 1)
        #expect(try await database.query("SELECT id FROM addresses WHERE street = 'London'")[0].decode(Int64.self, at: 0) == 42)
        try await database.query("INSERT INTO addresses (person_id, position, street) VALUES (1, 2, 'Horsley')")  // identity again
    }

    @Test("plain-SQL updates bump the version; NOTIFY carries table, op, key and version only")
    func changeNotifications() async throws {
        let database = try await TestServer.makeDatabase()
        try await Migrator(directory: Self.directory).migrate(database)
        let listener = try await RawListener(database: database.name(), channel: "live_changes")

        let id = try await database.query("INSERT INTO people (name) VALUES ($1) RETURNING id", ["Ada; DROP TABLE people"])[0].decode(Int.self, at: 0)
        try await database.query("UPDATE people SET name = $1 WHERE id = $2", ["Ada Lovelace", id])
        try await database.query("UPDATE people SET name = $1, version = 99 WHERE id = $2", ["Countess", id])
        #expect(try await database.query("SELECT version FROM people WHERE id = $1", [id])[0].decode(Int.self, at: 0) == 3)
        try await database.query("DELETE FROM people WHERE id = $1", [id])

        struct Payload: Decodable, Equatable { var table: String; var op: String; var key: Int; var version: Int }
        var payloads: [Payload] = []
        for _ in 0..<4 {
            let text = try #require(listener.next())
            #expect(!text.contains("Ada"), "a payload must never carry row data: \(text)")
            payloads.append(try JSONDecoder().decode(Payload.self, from: Data(text.utf8)))
        }
        #expect(payloads == [
            Payload(table: "public.people", op: "insert", key: id, version: 1),
            Payload(table: "public.people", op: "update", key: id, version: 2),
            Payload(table: "public.people", op: "update", key: id, version: 3),
            Payload(table: "public.people", op: "delete", key: id, version: 3),
        ])
    }
}
