import Foundation
@testable import Repository
import Testing

/// What `shutdown(timeout:)` says about the pending writes it waited for.
@Suite("Shutting a repository down")
struct ShutdownTests {
    @Test("a shutdown cancelled with nothing pending says the writes settled; one cancelled while a write waits for a row lock says they did not")
    func cancelledShutdown() async throws {
        let database = try await makeContactsDatabase()
        let idle = LiveRepository(database)
        _ = try await idle.read(Contact.self, id: 1)
        let quiet = Task { await idle.shutdown(timeout: .seconds(60)) }
        quiet.cancel()
        #expect(await quiet.value, "nothing was pending")

        let repository = LiveRepository(database)
        defer { repository.close() }
        let locker = Database(database.configuration, maximumConnections: 1)
        defer { locker.close() }
        try await locker.transaction { connection in
            // Another session holds the row: the write waits on its lock.
            try await connection.query("SELECT * FROM contacts WHERE id = 1 FOR UPDATE")
            let ada = try await repository.read(Contact.self, id: 1)
            ada[\.name].value = "Ada, written at shutdown"
            let name = try await database.name()
            #expect(try await eventually {
                try await TestServer.admin.value.query(
                    "SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' AND query LIKE 'UPDATE%'", [name]).count == 1
            })
            let busy = Task { await repository.shutdown(timeout: .seconds(60)) }
            busy.cancel()
            #expect(await busy.value == false, "the write was still waiting")
        }
    }
}
