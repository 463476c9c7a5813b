import Foundation
import Repository
import Testing

/// Stopping a change feed ends the statement its thread is waiting on: making a replication
/// slot waits for every transaction running on the server, which may take minutes.
@Suite("Stopping a change feed")
struct FeedStopTests {
    @Test("shutdown while the replication slot is being made (a transaction is open elsewhere) returns before that transaction ends, with no slot left")
    func shutdownWhileMakingSlot() async throws {
        let database = try await TestServer.makeDatabase(replication: true)
        defer { database.close() }
        try await database.query("CREATE TABLE items (id bigint PRIMARY KEY, name text NOT NULL)")
        try await LiveSchema.publish("items", on: database)
        // A transaction with an id, open until the test ends: a new slot waits for it.
        let blocker = Task {
            try await database.transaction { connection in
                _ = try await connection.query("SELECT txid_current()")
                _ = try await connection.query("SELECT pg_sleep(600) /* slot blocker */")
            }
        }
        defer { blocker.cancel() }
        let sleeping = "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(600) /* slot blocker */%' AND state = 'active' AND pid <> pg_backend_pid()"
        #expect(try await eventually { try await database.query(sleeping)[0].decode(Int64.self, at: 0) == 1 })

        let repository = LiveRepository(database, changes: .logicalReplication)
        let waiting = Task { try await repository.read(Item.self, id: 1) }
        defer { waiting.cancel() }
        let slots = "SELECT count(*) FROM pg_replication_slots WHERE database = current_database() AND starts_with(slot_name, 'live_feed_')"
        #expect(try await eventually { try await database.query(slots)[0].decode(Int64.self, at: 0) == 1 }, "the slot is being made")
        await repository.shutdown(timeout: .seconds(2))
        #expect(try await database.query(sleeping)[0].decode(Int64.self, at: 0) == 1, "shutdown waited for the open transaction")
        #expect(try await database.query(slots)[0].decode(Int64.self, at: 0) == 0, "shutdown returned with the slot still there")
    }

    struct Item: Record, Equatable {
        static let tableName = "items"
        var id: Int64
        var name: String
    }
}
