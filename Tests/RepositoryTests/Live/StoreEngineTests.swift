import AddressBookKit
import Foundation
@testable import Repository
import Testing

/// Which live stores the change feed runs through an engine made where their type is known
/// (see ``StoreEngine``).
@Suite("Store engines")
struct StoreEngineTests {
    @Test("reading a record, or a live query of records, registers the engine made for its type (and the query's router, the pass made for it), through which another process's change arrives; an aggregate's stores run through their own witnesses")
    func registration() async throws {
        let database = try await TestServer.makeDatabase()
        _ = try await AddressBook.migrate(database)
        try await database.query("CREATE TABLE contacts (id bigint PRIMARY KEY, name text NOT NULL, email text UNIQUE)")
        try await database.query("INSERT INTO contacts (id, name) VALUES (1, 'Ada'), (2, 'Grace')")
        try await LiveSchema.enable("contacts", on: database)
        let book = AddressBook(database)
        let grace = try await book.addPerson(name: "Grace", streets: ["Arlington"])
        let repository = book.repository
        func stores() -> [any AnyLiveStore] { repository.identity.withLock { $0.allStores() } }
        func registered(_ store: any AnyLiveStore) -> Bool { repository.engines.withLock { $0.isRegistered(for: store) } }

        let ada = try await repository.read(Contact.self, id: 1)
        let contact = try #require(stores().first { $0.tableName == "public.contacts" })
        #expect(registered(contact))
        try await psql("UPDATE contacts SET name = 'Ada, changed elsewhere' WHERE id = 1", database: database)
        #expect(try await eventually { ada.value.name == "Ada, changed elsewhere" })

        let fresh = LiveRepository(database)
        defer { fresh.close() }
        let all = try await fresh.readAll(Contact.self, where: "id <= 2")
        let member = try #require(fresh.identity.withLock { $0.allStores() }.first)
        #expect(fresh.engines.withLock { $0.isRegistered(for: member) })
        #expect(all.value.count == 2)
        let router = try #require(fresh.queries.withLock { $0.router(for: ObjectIdentifier(Contact.self)) } as? RecordQueryRouter<Contact>)
        #expect(router.routesSpecialized)
        try await psql("UPDATE contacts SET name = 'Grace, changed elsewhere' WHERE id = 2; INSERT INTO contacts (id, name) VALUES (0, 'Edsger')", database: database)
        #expect(try await eventually { all.value[id: 2]?.name == "Grace, changed elsewhere" && all.value.ids.elements == [0, 1, 2] })

        let person = try #require(stores().first { $0.storeKey.isAggregate })
        #expect(!registered(person))
        withExtendedLifetime(grace) {}
    }
}
