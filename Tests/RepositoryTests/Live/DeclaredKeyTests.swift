import Foundation
import Repository
import Testing

/// A declared key (`static var primaryKey`) that is not the table's primary key is refused:
/// changes are announced by the primary key, so values keyed otherwise would never follow them.
@Suite("Declared keys")
struct DeclaredKeyTests {
    struct ByEmail: Record, Equatable {
        static let tableName = "users"
        static var primaryKey: [String]? { ["email"] }
        var uid: Int64
        var email: String
        var name: String
        var id: String { email }
    }

    struct ByUID: Record, Equatable {
        static let tableName = "users"
        static var primaryKey: [String]? { ["uid"] }
        var uid: Int64
        var email: String
        var name: String
        var id: Int64 { uid }
    }

    @Test("a declared key of other columns than the primary key is refused in one line; the primary key declared is taken and followed")
    func declaredKey() async throws {
        let database = try await TestServer.makeDatabase()
        try await database.query("CREATE TABLE users (uid bigint PRIMARY KEY, email text UNIQUE NOT NULL, name text NOT NULL)")
        try await database.query("INSERT INTO users VALUES (1, 'a@x', 'Ada')")
        try await LiveSchema.enable("users", on: database)
        let repository = LiveRepository(database)
        defer { repository.close() }
        let refused = await #expect(throws: PostgresError.self) { try await repository.read(ByEmail.self, id: "a@x") }
        #expect(refused?.message == "the declared key (email) is not the primary key of public.users (uid), by which its changes are announced: declare that, in that order, or none",
                "\(String(describing: refused))")
        await #expect(throws: PostgresError.self) { try await repository.readAll(ByEmail.self) }
        let user = try await repository.read(ByUID.self, id: 1)
        try await psql("UPDATE users SET name = 'Augusta' WHERE uid = 1", database: database)
        #expect(try await eventually { user.value.name == "Augusta" })
    }
}
