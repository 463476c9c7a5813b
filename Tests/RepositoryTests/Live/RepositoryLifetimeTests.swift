import Foundation
import IdentifiedCollections
import Repository
import Testing

/// Live values keep their repository open: a program may keep a handle and let go of the
/// repository it came from, and the handle still follows changes.
@Suite("A live value keeps its repository")
struct RepositoryLifetimeTests {
    struct Count: Decodable, Equatable, Sendable {
        var count: Int64
    }

    /// Live values read from a repository nobody else holds; also a weak reference to it.
    static func liveValues(on database: Database) async throws
        -> (Var<Contact>, Var<IdentifiedArrayOf<Contact>>, Derived<[Count]>, WeakRepository) {
        let repository = LiveRepository(database)
        return (try await repository.read(Contact.self, id: 1), try await repository.readAll(Contact.self, orderBy: [.ascending(\.id)]),
                try await repository.readAll(Count.self, sql: "SELECT count(*) AS count FROM contacts"), WeakRepository(repository))
    }

    final class WeakRepository: Sendable {
        weak let repository: LiveRepository?
        init(_ repository: LiveRepository) { self.repository = repository }
    }

    /// A handle read from a repository nobody else holds; also a weak reference to it.
    static func handle(on database: Database) async throws -> (Var<Contact>, WeakRepository) {
        let repository = LiveRepository(database)
        return (try await repository.read(Contact.self, id: 2), WeakRepository(repository))
    }

    @Test("a handle alone follows changes once its repository is no longer held; let go, it closes it")
    func handleKeepsTheRepository() async throws {
        let database = try await makeContactsDatabase()
        var (handle, weak): (Var<Contact>?, WeakRepository) = try await Self.handle(on: database)
        try await database.query("UPDATE contacts SET name = 'Amazing Grace' WHERE id = 2")
        #expect(try await eventually { handle?.value.name == "Amazing Grace" })
        handle = nil
        #expect(try await eventually { weak.repository == nil })
        database.close()
    }

    @Test("a handle, a live query and a live SELECT follow changes once the repository is no longer held; let go, they close it")
    func valuesKeepTheRepository() async throws {
        let database = try await makeContactsDatabase()
        var (handle, query, count, weak): (Var<Contact>?, Var<IdentifiedArrayOf<Contact>>?, Derived<[Count]>?, WeakRepository)
            = try await Self.liveValues(on: database)
        #expect(weak.repository != nil)
        try await database.query("UPDATE contacts SET name = 'Augusta' WHERE id = 1")
        try await database.query("INSERT INTO contacts (id, name) VALUES (4, 'Barbara')")
        #expect(try await eventually { handle?.value.name == "Augusta" })
        #expect(try await eventually { query?.value.ids.elements == [1, 2, 3, 4] })
        #expect(try await eventually { count?.value == [Count(count: 4)] })
        // Writes go through too.
        handle?[\.name].value = "Ada"
        try await handle?.save()
        #expect(try await database.query("SELECT name FROM contacts WHERE id = 1")[0].decode(String.self, at: 0) == "Ada")

        (handle, query, count) = (nil, nil, nil)
        #expect(try await eventually { weak.repository == nil })
        database.close()
    }
}
