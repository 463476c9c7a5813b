import Foundation
@testable import Repository
import Testing

/// Rows read again together (after a reconnection, every live row is) are matched to their
/// handles by their keys' positions in the read; a row at the version its handle holds only
/// confirms it.
@Suite("Batched re-reads")
struct BatchReadTests {
    typealias Account = OwnKeyTests.Account
    typealias Member = Membership

    @Test("integer keys go into a batch's array as bare digits, negatives and the extremes too, and the server reads back the same keys")
    func integerKeyLiteral() async throws {
        let keys: [Int64] = [.min, -1, 0, 42, .max]
        #expect(ArrayLiteral.string(integers: keys) == "{-9223372036854775808,-1,0,42,9223372036854775807}")
        #expect(ArrayLiteral.string(integers: [Int]()) == "{}")
        let database = try await TestServer.makeDatabase()
        let back = try await database.query("SELECT unnest($1::int8[])", [ArrayLiteral.string(integers: keys)])
        #expect(try back.indices.map { try back[$0].decode(Int64.self, at: 0) } == keys)
    }

    @Test("after a reconnection, rows changed unannounced show it, a deleted one is deleted, and the unchanged ones tell nobody — keys of one text column and of two columns")
    func reconnectionReadsByPosition() async throws {
        let database = try await TestServer.makeDatabase()
        try await database.withConnection { connection in
            try await connection.execute(script: """
                CREATE TABLE accounts (user_id text PRIMARY KEY, name text NOT NULL);
                CREATE TABLE members (project_id bigint, user_id text, role text NOT NULL, PRIMARY KEY (project_id, user_id));
                INSERT INTO accounts VALUES ('ada', 'Ada'), ('grace', 'Grace'), ('édouard', 'Édouard');
                INSERT INTO members VALUES (7, 'ada', 'owner'), (7, 'grace', 'viewer'), (8, 'ada', 'viewer'), (8, 'o''brien', 'viewer');
                """)
        }
        for table in ["accounts", "members"] { try await LiveSchema.enable(table, on: database) }
        let repository = LiveRepository(database)
        defer { repository.close() }
        let log = ErrorLog(repository)
        var accounts: [String: Var<Account>] = [:]
        for id in ["ada", "grace", "édouard"] { accounts[id] = try await repository.read(Account.self, id: id) }
        var members: [Member.Key: Var<Member>] = [:]
        for (project, user) in [(7, "ada"), (7, "grace"), (8, "ada"), (8, "o'brien")] {
            let id = Member.Key(projectId: Int64(project), userId: user)
            members[id] = try await repository.read(Member.self, id: id)
        }
        let told = Recorder<String>()
        let subscriptions = accounts.map { id, handle in handle.observe { _ in told.append(id) } }
            + members.map { id, handle in handle.observe { _ in told.append("\(id.projectId)/\(id.userId)") } }
        defer { subscriptions.forEach { $0.cancel() } }

        // Changed unannounced: only the re-read after the reconnection can find it.
        for table in ["accounts", "members"] { try await database.query("SELECT live.disable_change_notifications($1)", [table]) }
        try await psql("UPDATE members SET role = 'admin' WHERE project_id = 8 AND user_id = 'o''brien'; DELETE FROM accounts WHERE user_id = 'grace'", database: database)
        let rowsBefore = repository.rowsRead
        try await database.query("SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE '% (change feed)'",
                                 [database.name()])
        let changed = Member.Key(projectId: 8, userId: "o'brien")
        #expect(try await eventually { members[changed]?.value.role == "admin" && accounts["grace"]?.liveState == .deleted })
        #expect(try await eventually { repository.rowsRead - rowsBefore >= 6 }, "every live row read again: \(repository.rowsRead - rowsBefore)")
        #expect(Set(told.all) == ["grace", "8/o'brien"], "\(told.all)")
        #expect(accounts["édouard"]?.value.name == "Édouard" && members[Member.Key(projectId: 7, userId: "grace")]?.value.role == "viewer")
        #expect(log.errors.all.contains { $0.contains("listening again") }, "\(log.errors.all)")

        // Confirmed rows are still followed, and written.
        for table in ["accounts", "members"] { try await LiveSchema.enable(table, on: database) }
        try await psql("UPDATE accounts SET name = 'Ada L.' WHERE user_id = 'ada'", database: database)
        #expect(try await eventually { accounts["ada"]?.value.name == "Ada L." })
        accounts["édouard"]?[\.name].value = "Edouard"
        try await accounts["édouard"]?.save()
        let stored = try await database.query("SELECT name FROM accounts WHERE user_id = 'édouard'")[0].decode(String.self, at: 0)
        #expect(stored == "Edouard")
    }
}
