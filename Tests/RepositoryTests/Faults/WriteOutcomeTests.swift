import Foundation
@testable import Repository
import Testing

/// A write whose connection is lost after its `UPDATE` was sent may have committed: `save()`
/// says so rather than that it failed and was reverted (a stranger's run: a server stopped
/// during a save reported "failed and was reverted", and the row held the new value after the
/// restart).
@Suite("A write's unknown outcome")
struct WriteOutcomeTests {
    struct Account: Record, Equatable {
        static let tableName = "outcome_accounts"
        var id: Int64
        var balance: Int64
    }

    @Test("the backend running a save's UPDATE is terminated: save() throws an error that says the write may have committed, and the handle converges")
    func lostDuringUpdate() async throws {
        let database = try await TestServer.makeDatabase()
        defer { database.close() }
        try await database.query("CREATE TABLE outcome_accounts (id bigint PRIMARY KEY, balance bigint NOT NULL)")
        try await database.query("INSERT INTO outcome_accounts VALUES (1, 100)")
        try await LiveSchema.enable("outcome_accounts", on: database)
        let repository = LiveRepository(database)
        defer { repository.close() }
        let account = try await repository.read(Account.self, id: 1)

        // Another session holds the row, so the UPDATE waits on its lock until its backend is ended.
        let name = try await database.name()
        let saved = try await database.withConnection { connection in
            try await connection.execute(script: "BEGIN; SELECT * FROM outcome_accounts WHERE id = 1 FOR UPDATE;")
            account[\.balance].value = 1001
            let save = Task { await Result { try await account.save() } }
            let admin = try await TestServer.admin.value
            let ended = try await eventually {
                try await admin.query("""
                    SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE datname = $1 AND wait_event_type = 'Lock' AND query LIKE 'UPDATE%'
                    """, [name]).count == 1
            }
            #expect(ended)
            let saved = await save.value
            try await connection.execute(script: "ROLLBACK;")
            return saved
        }
        let error = try #require(saved.failure as? LiveRecordError)
        #expect(error.mayHaveCommitted, "\(error)")
        #expect("\(error)".contains("may have committed") && !"\(error)".contains("reverted"), "\(error)")
        // It did not commit here (the backend ended while it waited): the handle shows the row.
        #expect(try await eventually { account.value.balance == 100 })
    }
}
