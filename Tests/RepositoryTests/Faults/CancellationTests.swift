import Foundation
@testable import Repository
import Testing

/// Cancelling a task reaches the server: the statement stops there, promptly.
@Suite("Cancellation")
struct CancellationTests {
    let database: Database

    init() async throws {
        database = try await TestServer.makeDatabase(maximumConnections: 2)
        try await database.query("CREATE TABLE marks (note text)")
    }

    // The statements sleep for ten minutes: under the thread sanitizer with every suite running,
    // seeing one in pg_stat_activity took longer than a 30-second sleep lasted (twice).

    /// Runs `body` in a task whose outcome can be looked at without awaiting it: nil while it
    /// runs, then `.some(nil)` (returned) or `.some(error)`.
    func startRecordingOutcome(_ body: @escaping @Sendable () async throws -> Void) -> (Task<Void, Never>, Locked<(any Error)??>) {
        let outcome = Locked<(any Error)??>(nil)
        let task = Task {
            do {
                try await body()
                outcome.withLock { $0 = .some(nil) }
            } catch {
                outcome.withLock { $0 = .some(error) }
            }
        }
        return (task, outcome)
    }

    /// Whether a statement containing `text` is running in this test's database.
    func running(_ text: String) async throws -> Bool {
        try await !TestServer.admin.value.query(
            "SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND state = 'active' AND query LIKE $2",
            [try await database.name(), "%\(text)%"]).isEmpty
    }

    @Test("a cancelled pg_sleep(600) throws CancellationError before it would be given up, and is gone from the server")
    func cancelSleep() async throws {
        let task = Task { try await database.query("SELECT pg_sleep(600) /* cancel-me */") }
        #expect(try await eventually(timeout: .seconds(60)) { try await running("cancel-me") })
        let start = ContinuousClock.now
        task.cancel()
        let outcome = await task.result
        let elapsed = ContinuousClock.now - start
        #expect(throws: CancellationError.self) { try outcome.get() }
        // Stopped by the cancel request, not given up (after StatementCanceller.giveUpAfter, the
        // connection is dropped and pg_sleep(600) would go on running on the server): no time
        // bound, which a loaded machine could exceed, tells these apart; the server does.
        #expect(try await eventually(timeout: .seconds(60)) { try await !running("cancel-me") })
        print("cancel latency: \(elapsed)")
        // The pool goes on working.
        #expect(try await database.query("SELECT 1")[0].decode(Int.self, at: 0) == 1)
    }

    @Test("cancelling inside transaction {} rolls back: nothing is committed")
    func cancelTransaction() async throws {
        let task = Task {
            try await database.transaction { connection in
                try await connection.query("INSERT INTO marks VALUES ('inside')")
                try await connection.query("SELECT pg_sleep(600) /* in-transaction */")
            }
        }
        #expect(try await eventually(timeout: .seconds(60)) { try await running("in-transaction") })
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(try await database.query("SELECT count(*) FROM marks")[0].decode(Int.self, at: 0) == 0)
        #expect(try await eventually(timeout: .seconds(60)) { try await !running("in-transaction") })
    }

    @Test("a task cancelled before its statement starts never runs it")
    func cancelledBeforeStart() async throws {
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await database.query("INSERT INTO marks VALUES ('never')")
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(try await database.query("SELECT count(*) FROM marks")[0].decode(Int.self, at: 0) == 0)
    }

    @Test("read(id:) blocked on a row lock, and save(), stop waiting when cancelled")
    func cancelReadAndSave() async throws {
        let contacts = try await makeContactsDatabase()
        let repository = LiveRepository(contacts)
        let handle = try await repository.read(Contact.self, id: 1)
        let locker = Database(contacts.configuration, maximumConnections: 1)
        try await locker.transaction { connection in
            try await connection.query("LOCK TABLE contacts IN ACCESS EXCLUSIVE MODE")
            let other = LiveRepository(contacts)
            let read = Task { try await other.read(Contact.self, id: 2) }
            handle[\.name].value = "waiting for the lock"
            let save = Task { try await handle.save() }
            let name = try await contacts.name()
            #expect(try await eventually {
                try await TestServer.admin.value.query(
                    "SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'", [name]).count == 2
            })
            let start = ContinuousClock.now
            read.cancel()
            save.cancel()
            await #expect(throws: CancellationError.self) { try await read.value }
            await #expect(throws: CancellationError.self) { try await save.value }
            // The lock is still held: returning at all shows neither waited for it (the bound is
            // loose for a loaded machine).
            #expect(ContinuousClock.now - start < .seconds(30))
            other.close()
        }
        try await handle.save()  // the write itself went on, once the lock was gone
        #expect(try await contacts.query("SELECT name FROM contacts WHERE id = 1")[0].decode(String.self, at: 0) == "waiting for the lock")
        locker.close()
        repository.close()
    }

    @Test("a cancelled statement whose server stopped answering is given up: the task ends, the pool goes on")
    func cancelUnansweredStatement() async throws {
        let (task, outcome) = startRecordingOutcome { _ = try await database.query("SELECT pg_sleep(600) /* frozen */") }
        #expect(try await eventually(timeout: .seconds(60)) { try await running("frozen") })
        let pid = try await TestServer.admin.value.query(
            "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND state = 'active' AND query LIKE '%frozen%'",
            [try await database.name()])[0].decode(Int32.self, at: 0)
        // The backend stops: it neither answers nor acts on the cancel request until continued.
        kill(pid, SIGSTOP)
        defer { kill(pid, SIGCONT) }
        task.cancel()
        let ended = try await eventually(timeout: .seconds(60)) { outcome.withLock { $0 != nil } }
        #expect(ended, "the cancelled task still waits for a server that does not answer")
        let error = outcome.withLock { $0 ?? nil }
        #expect(error is CancellationError, "ended with \(String(describing: error))")
        #expect(try await database.query("SELECT 1")[0].decode(Int.self, at: 0) == 1)
    }

    @Test("a cancelled statement is given up also when the cancel request itself cannot get through (a stopped server)")
    func cancelWhenTheServerIsStopped() async throws {
        try await LocalServer.withThrowaway { server in
            let connection = try await Connection.connect(server.configuration)
            let backend = try await connection.query("SELECT pg_backend_pid()")[0].decode(Int32.self, at: 0)
            let postmaster = try #require(server.processID)
            let (task, outcome) = startRecordingOutcome { _ = try await connection.query("SELECT pg_sleep(600)") }
            let observer = try await Connection.connect(server.configuration)
            #expect(try await eventually(timeout: .seconds(60)) {
                try await !observer.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND state = 'active'", [backend]).isEmpty
            })
            // The whole server stops: the cancel request's connection is accepted by the kernel and
            // then never answered, so PQcancel blocks.
            kill(postmaster, SIGSTOP)
            kill(backend, SIGSTOP)
            defer {
                kill(backend, SIGCONT)
                kill(postmaster, SIGCONT)
            }
            task.cancel()
            let ended = try await eventually(timeout: .seconds(60)) { outcome.withLock { $0 != nil } }
            #expect(ended, "the cancelled task still waits for a server that does not answer")
            let error = outcome.withLock { $0 ?? nil }
            #expect(error is CancellationError, "ended with \(String(describing: error))")
        }
    }

    @Test("a cancelled COMMIT that is given up says the transaction may have committed, not that it was cancelled")
    func cancelStuckCommit() async throws {
        // A deferred constraint trigger makes COMMIT itself take long.
        try await database.query("CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(600); RETURN NULL; END $$")
        try await database.query("""
            CREATE CONSTRAINT TRIGGER slow AFTER INSERT ON marks DEFERRABLE INITIALLY DEFERRED
            FOR EACH ROW EXECUTE FUNCTION slow_commit()
            """)
        let (task, outcome) = startRecordingOutcome {
            try await database.transaction { connection in _ = try await connection.query("INSERT INTO marks VALUES ('slow commit')") }
        }
        let name = try await database.name()
        let active = "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND state = 'active' AND query = 'COMMIT'"
        #expect(try await eventually(timeout: .seconds(60)) { try await !TestServer.admin.value.query(active, [name]).isEmpty })
        let pid = try await TestServer.admin.value.query(active, [name])[0].decode(Int32.self, at: 0)
        kill(pid, SIGSTOP)
        defer { kill(pid, SIGCONT) }
        task.cancel()
        #expect(try await eventually(timeout: .seconds(60)) { outcome.withLock { $0 != nil } })
        let ended: (any Error)? = outcome.withLock { $0 ?? nil }
        let error = ended as? PostgresError
        #expect(error?.kind == .connectionLost)
        #expect(error?.message.contains("may or may not have committed") == true, "ended with \(String(describing: ended))")
    }
}
