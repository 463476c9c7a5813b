import AddressBookKit
import Foundation
import IdentifiedCollections
@testable import Repository
import Testing

/// A database migrated by the address book's migrations as they were before the library owned
/// the `live` schema, upgraded by `AddressBook.migrate` while a process follows changes.
@Suite("Live schema: upgrading the old migrations")
struct LiveSchemaUpgradeTests {
    struct Named: Record, Equatable {
        static let tableName = "people"
        var id: Int64
        var name: String
    }

    @Test("writers keep writing through the upgrade; every change reaches the live query; history accepted, no drift")
    func upgradeWhileFollowing() async throws {
        let database = try await TestServer.makeDatabase()
        try await Migrator(directory: LiveSchemaTests.oldMigrations).migrate(database)
        #expect(try await LiveSchema.installedVersion(on: database) == nil)
        let repository = LiveRepository(database)
        defer { repository.close() }
        let everyone = try await repository.readAll(Named.self, orderBy: [.ascending(\.name)])
        // Each row is inserted once and renamed once, on either side of the upgrade: a missed
        // announcement leaves its row stale for good.
        let writer = Task {
            for index in 0..<400 {
                let id = try await database.query("INSERT INTO people (name) VALUES ($1) RETURNING id", ["p\(index)"])[0].decode(Int64.self, at: 0)
                try await database.query("UPDATE people SET name = $1 WHERE id = $2", ["renamed \(index)", id])
            }
        }
        // A gate, not a timing: the upgrade must come while rows are being written and followed
        // (the whole suite shares two cores, so this may take long).
        #expect(try await eventually(timeout: .seconds(180)) { everyone.value.count >= 50 })
        let applied = try await AddressBook.migrate(database)
        #expect(applied.isEmpty)                                   // nothing new: the rewritten ones are accepted
        #expect(try await LiveSchema.installedVersion(on: database) == LiveSchema.version)
        try await writer.value
        let expected = try await database.query("SELECT id, name FROM people ORDER BY name COLLATE \"C\", id").decode(Named.self)
        #expect(try await eventually { everyone.value.elements == expected }, "\(everyone.value.count) of \(expected.count) rows followed")
        #expect(expected.allSatisfy { $0.name.hasPrefix("renamed") })
        try await AddressBook.migrations().validate(database)
        let triggers = try await database.query("SELECT DISTINCT tgname FROM pg_trigger WHERE tgrelid = 'people'::regclass AND NOT tgisinternal ORDER BY 1")
            .map { try $0.decode(String.self, at: 0) }
        #expect(triggers == ["live_announce_delete", "live_announce_insert", "live_announce_truncate", "live_announce_update"])
    }

    static let version2 = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("SchemaVersion2/install.sql")

    @Test("version 2's schema upgraded while writers write: the tables' announcement functions are made anew, every change is followed")
    func upgradeFromVersion2() async throws {
        let database = try await TestServer.makeDatabase()
        try await database.withConnection { connection in
            try await connection.execute(script: String(contentsOf: Self.version2, encoding: .utf8))
            try await connection.execute(script: """
                CREATE TABLE people (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, name text NOT NULL);
                SELECT live.enable_change_notifications('people');
                """)
        }
        #expect(try await LiveSchema.installedVersion(on: database) == 2)
        func calls() async throws -> [Bool] {
            try await database.query("""
                SELECT prosrc LIKE '%live.announced_table(%' FROM pg_proc
                WHERE pronamespace = 'live'::regnamespace AND proname LIKE 'announce\\_%' AND proname <> 'announce_truncate'
                """).map { try $0.decode(Bool.self, at: 0) }
        }
        #expect(try await calls() == [true])  // version 2's trigger function calls a helper on every statement
        let repository = LiveRepository(database)
        defer { repository.close() }
        let everyone = try await repository.readAll(Named.self, orderBy: [.ascending(\.name)])
        let writer = Task {
            for index in 0..<300 {
                let id = try await database.query("INSERT INTO people (name) VALUES ($1) RETURNING id", ["p\(index)"])[0].decode(Int64.self, at: 0)
                try await database.query("UPDATE people SET name = $1 WHERE id = $2", ["renamed \(index)", id])
            }
        }
        #expect(try await eventually(timeout: .seconds(180)) { everyone.value.count >= 30 })
        #expect(try await LiveSchema.install(on: database))
        #expect(try await LiveSchema.installedVersion(on: database) == LiveSchema.version)
        #expect(try await calls() == [false])
        try await writer.value
        let expected = try await database.query("SELECT id, name FROM people ORDER BY name COLLATE \"C\", id").decode(Named.self)
        #expect(try await eventually { everyone.value.elements == expected }, "\(everyone.value.count) of \(expected.count) rows followed")
        #expect(expected.count == 300 && expected.allSatisfy { $0.name.hasPrefix("renamed") })
    }

    @Test("a fresh database: the library's schema, then the address book's migrations, and the demo's flow works")
    func freshDatabase() async throws {
        let database = try await TestServer.makeDatabase()
        #expect(try await AddressBook.migrate(database).map(\.version) == [1, 2, 3, 4, 5])
        let book = AddressBook(database)
        defer { book.close() }
        let ada = try await book.addPerson(name: "Ada", streets: ["London"])
        let everyone = try await book.people()
        try await database.query("UPDATE addresses SET street = 'Ockham' WHERE person_id = $1", [ada.value.id])
        #expect(try await eventually { ada.value.addresses.map(\.street) == ["Ockham"] && everyone.value.first?.addresses.first?.street == "Ockham" })
    }
}
