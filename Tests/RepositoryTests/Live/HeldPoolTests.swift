import Foundation
import Repository
import Testing

/// Live values used from a task that holds every connection of the pool.
@Suite("Live values inside a body that holds the whole pool")
struct HeldPoolTests {
    @Test("save() and read inside a one-connection transaction are told so at once, not left waiting; the edit is written once the connection is given back")
    func saveInsideTransaction() async throws {
        let contacts = try await makeContactsDatabase()
        let database = Database(contacts.configuration, maximumConnections: 1)
        defer { database.close() }
        let repository = LiveRepository(database)
        defer { repository.close() }
        let ada = try await repository.read(Contact.self, id: 1)
        try await database.transaction { connection in
            ada[\.name].value = "Ada L."
            let refused = await #expect(throws: PostgresError.self) { try await ada.save() }
            #expect(refused?.message.contains("would wait forever") == true, "\(String(describing: refused))")
            await #expect(throws: (any Error).self) { try await repository.read(Contact.self, id: 2) }
            try await connection.query("UPDATE contacts SET email = $1 WHERE id = 3", ["edsger@example.org"])
        }
        #expect(ada.value.name == "Ada L.")  // the edit stayed
        try await ada.save()
        #expect(try await contacts.query("SELECT name FROM contacts WHERE id = 1")[0].decode(String.self, at: 0) == "Ada L.")
        #expect(try await repository.read(Contact.self, id: 3).value.email == "edsger@example.org")
    }
}
