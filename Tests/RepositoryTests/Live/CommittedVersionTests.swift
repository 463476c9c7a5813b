import AddressBookKit
import Foundation
import Repository
import Testing

@Suite("Committed versions")
struct CommittedVersionTests {
    @Test("a live person's version is its rows' xmins, the person's then the addresses'; it follows writes by this process and by psql; plain Vars and live lists have none")
    func followsTheRows() async throws {
        let database = try await makeAddressBookDatabase()
        let book = AddressBook(database)
        let ada = try await book.addPerson(name: "Ada", streets: ["12 St James's Square", "Ockham Park"])
        let id = ada.value.id
        func xmins() async throws -> [Int64] {
            let root = try await database.query("SELECT xmin::text::bigint FROM people WHERE id = $1", [id])[0].decode(Int64.self, at: 0)
            let children = try await database.query("SELECT xmin::text::bigint FROM addresses WHERE person_id = $1 ORDER BY position", [id])
                .map { try $0.decode(Int64.self, at: 0) }
            return [root] + children
        }
        let first = try #require(ada.committedVersion)
        #expect(first.rows == (try await xmins()))
        #expect(first.description == first.rows.map(String.init).joined(separator: "."))
        #expect(ada[\.name].committedVersion == first, "a reference into the value has its version")

        // This process's write: the version moves when it commits, not when the edit is made.
        let other = try await book.readPerson(id: id)
        other[\.name].value = "Ada Lovelace"
        #expect(ada.committedVersion == first)
        try await other.save()
        let saved = try #require(ada.committedVersion)
        let afterSave = try await xmins()
        #expect(saved != first && saved.rows == afterSave)

        // Another process's write: the version follows once the change is read.
        try await psql("UPDATE addresses SET street = 'Horsley Towers' WHERE person_id = \(id) AND position = 1", database: database)
        #expect(try await eventually { ada.value.addresses.last?.street == "Horsley Towers" })
        let afterPsql = try await xmins()
        #expect(ada.committedVersion != saved && ada.committedVersion?.rows == afterPsql)

        #expect(Var(1).committedVersion == nil)
        #expect(try await book.people().committedVersion == nil)
    }
}
