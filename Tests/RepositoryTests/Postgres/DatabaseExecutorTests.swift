import Foundation
@testable import Repository
import Testing

/// Tasks that prefer ``Database/executor`` run on the poller's thread: statements, live reads,
/// writes and transactions go on there, and many such tasks at once do not wait on each other.
@Suite("Database executor")
struct DatabaseExecutorTests {
    @Test("on the database's executor: reads, live writes, transactions, and 20 tasks at once")
    func preferringTheExecutor() async throws {
        let database = try await makeContactsDatabase()
        let repository = LiveRepository(database)
        defer { repository.close() }
        let names = try await withTaskExecutorPreference(database.executor) {
            let ada = try await repository.read(Contact.self, id: 1)
            ada[\.name].value = "Augusta"
            try await ada.save()
            try await database.transaction { connection in
                try await connection.query("UPDATE contacts SET email = $1 WHERE id = $2", ["a@example.com", 1])
            }
            return try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 1...20 {
                    group.addTask { try await database.query("SELECT name FROM contacts WHERE id = 1")[0].decode(String.self, at: 0) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        #expect(names == Array(repeating: "Augusta", count: 20))
        let row = try await database.query("SELECT email FROM contacts WHERE id = 1")[0]
        #expect(try row.decode(String.self, at: 0) == "a@example.com")
    }

    @Test("a task yielding in a loop on the executor does not keep statements from their answers")
    func yieldingTaskDoesNotStarveSockets() async throws {
        let database = try await TestServer.makeDatabase(maximumConnections: 2)
        let answered = Locked(false)
        let deadline = ContinuousClock.now + .seconds(60)
        let answeredWhileYielding = try await withTaskExecutorPreference(database.executor) {
            async let statement: Void = {
                _ = try await database.query("SELECT pg_sleep(0.01)")
                answered.withLock { $0 = true }
            }()
            // Each yield queues this task again on the poller's thread, which must still wait
            // for sockets between runs of jobs.
            while !answered.withLock({ $0 }), ContinuousClock.now < deadline { await Task.yield() }
            let answeredWhileYielding = answered.withLock { $0 }
            try await statement
            return answeredWhileYielding
        }
        #expect(answeredWhileYielding, "the statement was answered only once the yielding stopped")
    }
}
