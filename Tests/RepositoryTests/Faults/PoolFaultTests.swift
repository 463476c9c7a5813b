import Foundation
@testable import Repository
import Testing

/// The pool and live handles across server restarts, terminated backends and a full server.
@Suite("Pool faults")
struct PoolFaultTests {
    @Test("a server restart with a warm pool of 4: a live handle converges to a later change, and a later write succeeds")
    func restartWithWarmPool() async throws {
        let directory = FileManager.default.temporaryDirectory.path + "/pool-restart-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await LocalServer.start(.persistent(directory: directory))
        let database = Database(server.configuration, maximumConnections: 4)
        try await migrateProject(database)
        try await database.query("CREATE TABLE contacts (id bigint PRIMARY KEY, name text NOT NULL, email text, version bigint NOT NULL DEFAULT 1)")
        try await database.query("SELECT live.enable_change_notifications('contacts')")
        try await database.query("INSERT INTO contacts (id, name) VALUES (1, 'Ada')")
        let repository = LiveRepository(database)
        let ada = try await repository.read(Contact.self, id: 1)
        // Four idle connections in the pool.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 { group.addTask { try await database.query("SELECT pg_sleep(0.05)") } }
            try await group.waitForAll()
        }

        try await server.stop()
        let restarted = try await LocalServer.start(.persistent(directory: directory))
        let started = ContinuousClock.now
        let other = Database(restarted.configuration, maximumConnections: 1)
        try await other.query("UPDATE contacts SET name = 'Grace' WHERE id = 1")
        #expect(try await eventually(timeout: .seconds(30)) { ada.value.name == "Grace" })
        print("restart with a warm pool: converged \(ContinuousClock.now - started) after the server was back")
        ada[\.email].value = "grace@example.com"
        try await ada.save()
        #expect(try await other.query("SELECT email FROM contacts WHERE id = 1")[0].decode(String.self, at: 0) == "grace@example.com")
        repository.close()
        other.close()
        database.close()
        try await restarted.stop()
    }

    @Test("every pooled connection terminated at once: the next statement succeeds")
    func terminateAll() async throws {
        let database = try await TestServer.makeDatabase(maximumConnections: 4)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 { group.addTask { try await database.query("SELECT pg_sleep(0.05)") } }
            try await group.waitForAll()
        }
        let terminated = try await TestServer.admin.value.query(
            "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
            [try await database.name()])
        #expect(terminated.count == 4)
        #expect(try await database.query("SELECT 42")[0].decode(Int.self, at: 0) == 42)
        #expect(try await database.transaction { try await $0.query("SELECT 43")[0].decode(Int.self, at: 0) } == 43)
    }

    @Test("a server with no connection to spare: a read fails fast with the server's reason, not after a stall")
    func fullServer() async throws {
        let database = try await makeContactsDatabase()
        let role = "limited_\(UInt32.random(in: 0...UInt32.max))"
        // Not a superuser: superusers are exempt from connection limits.
        try await TestServer.admin.value.query("CREATE ROLE \(role) LOGIN CONNECTION LIMIT 1 PASSWORD 'role-pw'")
        try await database.query("GRANT SELECT, UPDATE ON contacts TO \(role)")
        func connections() async throws -> Int {
            try await TestServer.admin.value.query("SELECT count(*) FROM pg_stat_activity WHERE usename = $1", [role])[0].decode(Int.self, at: 0)
        }
        // (1) The change feed holds the only connection there is.
        let limited = Database(database.configuration.user(role, password: "role-pw"), maximumConnections: 4)
        let repository = LiveRepository(limited)
        #expect(try await eventually { try await connections() == 1 })
        var started = ContinuousClock.now
        let first = await Result { try await repository.read(Contact.self, id: 1) }
        let feedHoldsIt = ContinuousClock.now - started
        // (2) Another session holds it: the feed cannot connect either.
        repository.close()
        limited.close()
        #expect(try await eventually { try await connections() == 0 })
        let squatter = Database(database.configuration.user(role, password: "role-pw"), maximumConnections: 1)
        try await squatter.query("SELECT 1")
        let blocked = Database(database.configuration.user(role, password: "role-pw"), maximumConnections: 4)
        let starved = LiveRepository(blocked)
        started = ContinuousClock.now
        let second = await Result { try await starved.read(Contact.self, id: 1) }
        let nothingFree = ContinuousClock.now - started
        print("a full server: a read failed with the server's reason after \(feedHoldsIt) (the feed holding the last connection) and \(nothingFree) (none at all)")
        for outcome in [first, second] {
            guard case .failure(let error) = outcome else {
                Issue.record("the read succeeded without a connection to spare")
                continue
            }
            #expect("\(error)".contains("too many connections"), "\(error)")
        }
        // Below the 10 s that reads wait for the feed (what a stall would take), with room for a
        // loaded machine.
        #expect(feedHoldsIt < .seconds(8) && nothingFree < .seconds(8))
        starved.close()
        blocked.close()
        squatter.close()
    }

    @Test("a server that lets the pool open one connection: 100 edits from 100 tasks all commit over it, none fails")
    func serverOutOfConnections() async throws {
        let database = try await makeContactsDatabase()
        try await database.query("INSERT INTO contacts (id, name) SELECT n, 'person ' || n FROM generate_series(4, 100) n")
        let role = "scarce_\(UInt32.random(in: 0...UInt32.max))"
        // Not a superuser: superusers are exempt from connection limits. The feed takes one.
        // (Through the test's own pool: the shared admin pool is busy in a full run.)
        try await database.query("CREATE ROLE \(role) LOGIN CONNECTION LIMIT 2 PASSWORD 'role-pw'")
        try await database.query("GRANT SELECT, UPDATE ON contacts TO \(role)")
        try await database.query("GRANT USAGE ON SCHEMA live TO \(role)")  // the announcing trigger's functions
        let scarce = Database(database.configuration.user(role, password: "role-pw"), maximumConnections: 4)
        let repository = LiveRepository(scarce)
        // The feed connects first (else the pool's attempts may take its place, and it reports that).
        #expect(try await eventually {
            try await database.query("SELECT count(*) FROM pg_stat_activity WHERE usename = $1", [role])[0].decode(Int.self, at: 0) == 1
        })
        let errors = Recorder<String>()
        let stream = repository.errors  // subscribed now, not when the task runs
        let reader = Task { for await error in stream { errors.append("\(error)") } }
        let people = try await withThrowingTaskGroup(of: Var<Contact>.self) { group in
            for id in 1...100 { group.addTask { try await repository.read(Contact.self, id: Int64(id)) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for person in people {
                group.addTask {
                    person[\.name].value = "edited \(person.value.id)"
                    try await person.save()
                }
            }
            try await group.waitForAll()
        }
        let edited = try await database.query("SELECT count(*) FROM contacts WHERE name LIKE 'edited %'")[0].decode(Int.self, at: 0)
        #expect(edited == 100)
        #expect(errors.all.isEmpty, "\(errors.all.prefix(3))")
        reader.cancel()
        repository.close()
        scarce.close()
    }

    @Test("a role allowed one connection, a statement inside the transaction that holds it: refused, it tries again until the connect timeout, then fails with the server's reason instead of waiting for itself",
          .timeLimit(.minutes(5)))
    func refusedWhileHoldingTheOnlyConnection() async throws {
        let database = try await TestServer.makeDatabase(maximumConnections: 1)
        let role = "single_\(UInt32.random(in: 0...UInt32.max))"
        try await database.query("CREATE ROLE \(role) LOGIN CONNECTION LIMIT 1 PASSWORD 'role-pw'")  // not through the busy shared admin pool
        var configuration = database.configuration.user(role, password: "role-pw")
        configuration.connectTimeout = 2
        let single = Database(configuration, maximumConnections: 4)
        let outcome = await Result { try await single.transaction { _ in try await single.query("SELECT 1") } }
        guard case .failure(let error) = outcome else {
            Issue.record("a second connection was opened for a role allowed one")
            return
        }
        #expect("\(error)".contains("too many connections"), "\(error)")
        // The pool goes on with the connection it has.
        #expect(try await single.query("SELECT 42")[0].decode(Int.self, at: 0) == 42)
        single.close()
        database.close()
    }

    @Test("no server at all: 50 statements at once on a cold pool all fail with the reason, together, not one after another",
          .timeLimit(.minutes(5)))
    func noServer() async throws {
        let nowhere = Database(try ConnectionConfiguration(url: "postgres://nobody@127.0.0.1:1/none"), maximumConnections: 8)
        let started = ContinuousClock.now
        let outcomes = await withTaskGroup(of: Result<QueryResult, any Error>.self) { group in
            for _ in 0..<50 { group.addTask { await Result { try await nowhere.query("SELECT 1") } } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let elapsed = ContinuousClock.now - started
        print("no server: 50 statements failed after \(elapsed)")
        for outcome in outcomes {
            guard case .failure(let error) = outcome else { Issue.record("a statement ran with no server"); continue }
            #expect("\(error)".contains("127.0.0.1"), "\(error)")
        }
        // One refusal is tried again for about a second; the waiters fail with it, not each in turn.
        #expect(elapsed < .seconds(20))
        nowhere.close()
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }

    var isSuccess: Bool { if case .success = self { true } else { false } }
}
