import AddressBookKit
import Foundation
import Repository
import Testing

/// An aggregate is read as one value: its root and its children from one snapshot.
@Suite("Aggregate reads in one snapshot")
struct AggregateSnapshotTests {
    @Test("a person read while another process renames them and their address in each transaction is never torn: name and street always agree (a stranger's demo showed a name from one commit, a street from the next)")
    func neverTorn() async throws {
        let database = try await makeAddressBookDatabase()
        let ada = try await AddressBook(database).addPerson(name: "v0", streets: ["v0"])
        let id = ada.value.id
        let writer = Database(database.configuration, maximumConnections: 1)
        defer { writer.close() }
        let writing = Task {
            var version = 0
            while !Task.isCancelled {
                version += 1
                try await writer.transaction { connection in
                    try await connection.query("UPDATE people SET name = $1 WHERE id = $2", ["v\(version)", id])
                    try await connection.query("UPDATE addresses SET street = $1 WHERE person_id = $2", ["v\(version)", id])
                }
            }
        }
        defer { writing.cancel() }
        var torn: [String] = []
        for _ in 0..<150 {
            // A fresh repository each time: the read goes to the database, not to a live value.
            let book = AddressBook(database)
            let person = try await book.readPerson(id: id).value
            if person.addresses.map(\.street) != [person.name] { torn.append("\(person.name) with \(person.addresses.map(\.street))") }
            book.close()
        }
        writing.cancel()
        _ = await writing.result
        #expect(torn.isEmpty, "\(torn.count) of 150 reads torn: \(torn.prefix(3))")
    }

    @Test("after a column is added to both tables, a live person still follows another process's changes: a statement prepared before it is prepared anew in the read's transaction (a review found the feed's reads failing for good)")
    func columnAdded() async throws {
        let database = try await makeAddressBookDatabase()
        let book = AddressBook(database)
        defer { book.close() }
        let ada = try await book.addPerson(name: "Ada", streets: ["One"])
        let id = ada.value.id
        try await psql("UPDATE addresses SET street = 'Two' WHERE person_id = \(id)", database: database)
        #expect(try await eventually { ada.value.addresses.map(\.street) == ["Two"] })
        try await psql("ALTER TABLE addresses ADD COLUMN note text; ALTER TABLE people ADD COLUMN nickname text", database: database)
        try await psql("UPDATE addresses SET street = 'Three' WHERE person_id = \(id)", database: database)
        #expect(try await eventually { ada.value.addresses.map(\.street) == ["Three"] }, "\(ada.value.addresses.map(\.street))")
        try await psql("UPDATE people SET name = 'Ada L' WHERE id = \(id)", database: database)
        #expect(try await eventually { ada.value.name == "Ada L" })
    }
}
