import Foundation
@testable import Repository
import Testing

@Suite("Database pool")
struct DatabasePoolTests {
    @Test("100 concurrent tasks share a pool of 4 connections")
    func concurrentTasks() async throws {
        let database = try await TestServer.makeDatabase(maximumConnections: 4)
        let pids = try await withThrowingTaskGroup(of: Int32.self) { group in
            for index in 0..<100 {
                group.addTask {
                    let row = try await database.query("SELECT pg_backend_pid(), $1::int AS n, pg_sleep(0.005)", [index])[0]
                    #expect(try row.decode(Int.self, column: "n") == index)
                    return try row.decode(Int32.self, at: 0)
                }
            }
            return try await group.reduce(into: Set<Int32>()) { $0.insert($1) }
        }
        #expect(pids.count <= 4)
        #expect(pids.count >= 1)
    }

    @Test("a task waiting for a connection can be cancelled")
    func cancelWaiter() async throws {
        let database = try await TestServer.makeDatabase(maximumConnections: 1)
        let (held, release) = AsyncStream<Void>.makeStream()
        let (acquired, signalAcquired) = AsyncStream<Void>.makeStream()
        let holder = Task {
            try await database.withConnection { _ in
                signalAcquired.yield()
                for await _ in held { break }
            }
        }
        for await _ in acquired { break }
        let waiter = Task { try await database.query("SELECT 1") }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        release.yield()
        try await holder.value
        #expect(try await database.query("SELECT 7")[0].decode(Int.self, at: 0) == 7)
    }

    @Test("a task holding every connection that asks the pool for another is told so at once, not left waiting for itself")
    func selfDeadlockRefused() async throws {
        let database = try await TestServer.makeDatabase(maximumConnections: 1)
        let inside = try await database.transaction { connection in
            let error = await #expect(throws: PostgresError.self) { try await database.query("SELECT 1") }
            #expect(error?.message.contains("holds all 1 connection(s) of the pool") == true)
            // The transaction goes on: nothing was sent.
            return try await connection.query("SELECT 2")[0].decode(Int.self, at: 0)
        }
        #expect(inside == 2)
        // A task started inside the body is not the holder: it waits for the connection and gets it.
        let later = try await database.withConnection { _ in Task { try await database.query("SELECT 3")[0].decode(Int.self, at: 0) } }
        #expect(try await later.value == 3)

        // With two connections, one held leaves one for the pool; both held, the third is refused.
        let two = try await TestServer.makeDatabase(maximumConnections: 2)
        try await two.withConnection { _ in
            #expect(try await two.query("SELECT 4")[0].decode(Int.self, at: 0) == 4)
            try await two.withConnection { _ in
                await #expect(throws: PostgresError.self) { try await two.query("SELECT 5") }
            }
            #expect(try await two.query("SELECT 6")[0].decode(Int.self, at: 0) == 6)
        }
    }

    @Test("a hold counts while its body runs, for its own task only: once it ended, a task that inherited it — or has the holder's identity — is not refused")
    func endedHoldsDoNotCount() async throws {
        let database = try await TestServer.makeDatabase(maximumConnections: 1)
        let inherited = try await database.withConnection { _ in
            #expect(Database.held.count(of: database) == 1)
            #expect(await Task { Database.held.count(of: database) }.value == 0)  // another task: not the holder
            return Database.held
        }
        #expect(inherited.count(of: database) == 0)  // the same task, after the hold ended
    }

    @Test("a connection kept past its transaction, or its withConnection body, is refused while it sits in the pool: nothing it sends runs")
    func keptConnectionRefused() async throws {
        let database = try await TestServer.makeDatabase(maximumConnections: 1)
        let kept = try await database.transaction { connection in
            try await connection.query("SELECT 1")
            return connection
        }
        let marker = "kept_\(UInt32.random(in: 0...UInt32.max))"
        let error = await #expect(throws: PostgresError.self) { try await kept.query("CREATE TEMPORARY TABLE \(marker) (n int)") }
        #expect(error?.kind == .closed)
        #expect(error?.statementWasNotSent == true)
        #expect(error?.message.contains("handed back to its pool") == true)
        await #expect(throws: PostgresError.self) { try await kept.transaction { _ in } }
        let alsoKept = try await database.withConnection { $0 }
        await #expect(throws: PostgresError.self) { try await alsoKept.query("SELECT 1") }
        // The pool's one connection is unharmed, and the refused statement never ran on it.
        let exists = try await database.query("SELECT to_regclass($1) IS NOT NULL", ["pg_temp.\(marker)"])[0].decode(Bool.self, at: 0)
        #expect(!exists)
        // Taken out of the pool again, the same connection runs statements.
        try await database.withConnection { connection in
            #expect(connection === kept)
            try await connection.query("SELECT 1")
        }
    }

    @Test("a session SET made through the pool stays with its connection (README says so); SET LOCAL ends with its transaction; a setting in the connection string holds on every connection")
    func sessionSettings() async throws {
        let database = try await TestServer.makeDatabase(maximumConnections: 1)
        func timeout(_ database: Database) async throws -> String {
            try await database.query("SELECT current_setting('statement_timeout')")[0].decode(String.self, at: 0)
        }
        let before = try await timeout(database)
        try await database.transaction { try await $0.query("SET LOCAL statement_timeout = '7s'") }
        #expect(try await timeout(database) == before)
        try await database.query("SET statement_timeout = '9s'")
        #expect(try await timeout(database) == "9s")
        let base = try await TestServer.connectionString(database: "postgres")
        let withOptions = base.contains("://")
            ? base + (base.contains("?") ? "&" : "?") + "options=-c%20search_path%3Dapp_schema"
            : base + " options='-c search_path=app_schema'"
        let configured = Database(try ConnectionConfiguration(conninfo: withOptions), maximumConnections: 2)
        defer { configured.close() }
        // Two connections for certain: one held while the pool opens another.
        let show = "SELECT current_setting('search_path'), pg_backend_pid()"
        let (held, other) = try await configured.withConnection { connection in
            (try await connection.query(show)[0], try await configured.query(show)[0])
        }
        #expect(try held.decode(Int32.self, at: 1) != other.decode(Int32.self, at: 1))
        #expect(try [held.decode(String.self, at: 0), other.decode(String.self, at: 0)] == ["app_schema", "app_schema"])
    }

    @Test("a closed pool refuses work")
    func closed() async throws {
        let database = try await TestServer.makeDatabase()
        try await database.query("SELECT 1")
        database.close()
        let error = await #expect(throws: PostgresError.self) { try await database.query("SELECT 1") }
        #expect(error?.kind == .closed)
    }
}
