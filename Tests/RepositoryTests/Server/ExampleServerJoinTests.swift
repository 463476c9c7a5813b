import AddressBookKit
import Foundation
@testable import Repository
import Testing

/// `GET /people/address-counts/events`: a live join over HTTP.
@Suite("Example server: a live join", .enabled(if: ExampleServer.isBuilt))
struct ExampleServerJoinTests {
    @Test("each person with their address count, streamed again when psql adds an address or renames a person")
    func addressCounts() async throws {
        let database = try await TestServer.makeDatabase()
        try await AddressBook.migrate(database)
        let book = AddressBook(database)
        let ada = try await book.addPerson(name: "Ada", streets: ["London"])
        let grace = try await book.addPerson(name: "Grace", streets: [])
        let server = try await ExampleServerProcess(databaseURL: try await TestServer.connectionString(database: database.name()))
        let (adaID, graceID) = (ada.value.id, grace.value.id)
        let counts = try await ExampleServer.curl("\(server.base)/people/address-counts")
        #expect(counts == #"[{"addresses":1,"id":\#(adaID),"name":"Ada"},{"addresses":0,"id":\#(graceID),"name":"Grace"}]"#)

        let client = try StreamClient(port: server.port)
        try client.get("/people/address-counts/events")
        try await client.read(until: "]}\n\n")
        #expect(client.text.contains(#"event: counts"#) && client.text.contains(#"data: {"people":[{"addresses":1,"id":\#(adaID),"name":"Ada"},{"addresses":0"#))
        client.clear()
        try await psql("INSERT INTO addresses (person_id, position, street) VALUES (\(graceID), 0, 'Arlington'), (\(graceID), 1, 'Washington')", database: database)
        try await client.read(until: "]}\n\n")
        #expect(client.text.contains(#"{"addresses":2,"id":\#(graceID),"name":"Grace"}"#), "\(client.text)")
        client.clear()
        try await psql("UPDATE people SET name = 'Augusta Ada' WHERE id = \(adaID)", database: database)
        try await client.read(until: "]}\n\n")
        #expect(client.text.contains(#"data: {"people":[{"addresses":1,"id":\#(adaID),"name":"Augusta Ada"},{"addresses":2"#), "\(client.text)")
        client.close()
        #expect(try await server.stop() == 0)
    }

    @Test("in a database whose collation is linguistic (ICU), the join lists people in the order GET /people does: by the names' bytes (a stranger's run)")
    func sameOrderAsThePeople() async throws {
        let database = try await TestServer.makeDatabase(options: "TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'")
        try await AddressBook.migrate(database)
        let book = AddressBook(database)
        for name in ["zoe", "Bob", "ada", "Émile", "Adam", "bob"] { _ = try await book.addPerson(name: name, streets: []) }
        let server = try await ExampleServerProcess(databaseURL: try await TestServer.connectionString(database: database.name()))
        struct Named: Decodable { var name: String }
        func names(_ route: String) async throws -> [String] {
            try JSONDecoder().decode([Named].self, from: Data(try await ExampleServer.curl("\(server.base)\(route)").utf8)).map(\.name)
        }
        let people = try await names("/people")
        #expect(people == ["Adam", "Bob", "ada", "bob", "zoe", "Émile"])
        #expect(try await names("/people/address-counts") == people)
        #expect(try await server.stop() == 0)
    }
}
