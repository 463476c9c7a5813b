import Foundation
import Repository
import Testing

/// The repository's own Migrations/: the address book's tables, on the library's live schema.
@Suite("Project migrations")
struct ProjectMigrationsTests {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Migrations").path

    @Test("apply, roll back and apply again")
    func roundTrip() async throws {
        let database = try await TestServer.makeDatabase()
        try await LiveSchema.install(on: database)
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
        try await LiveSchema.install(on: database)
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
}
