import Foundation
import Logging
@testable import Repository
import Testing

/// Statements right after the server ended the pool's idle connections (`pg_terminate_backend`,
/// as a failover, a pooler restart or `idle_session_timeout` does).
@Suite("Terminated pool connections")
struct TerminatedConnectionTests {
    /// The tests that stop a backend with SIGSTOP need the throwaway local server.
    static let stopsBackends = ProcessInfo.processInfo.environment["DATABASE_URL"] == nil

    let records = Recorder<(level: Logger.Level, message: String)>()
    /// What the pool logs when it runs a statement again (see `Database.retryingUnrun`).
    static let ranAgain = "the connection was lost before the statement ran"

    private func makeDatabase(maximumConnections: Int) async throws -> Database {
        var logger = Logger(label: "test") { [records] _ in RecordingLogHandler(records: records) }
        logger.logLevel = .debug
        return Database(try await TestServer.makeDatabaseConfiguration(), maximumConnections: maximumConnections, logger: logger)
    }

    private func count(_ prefix: String) -> Int { records.all.filter { $0.message.hasPrefix(prefix) }.count }

    /// The CPU load runs from the termination to the statement's answer, where the race is, and
    /// pauses while the pool is warmed, so that the rest of the suite is not slowed for minutes.
    @Test("every idle pooled connection terminated, 60 rounds under CPU load: the next query and the next transaction succeed every time")
    func terminateAllUnderLoad() async throws {
        let database = try await makeDatabase(maximumConnections: 4)
        defer { database.close() }
        let name = try await database.name()
        let burners = try CPUBurners()
        defer { burners.stop() }
        let rounds = 60
        var failures: [String] = []
        var terminated = 0
        let started = ContinuousClock.now
        for round in 0..<rounds {
            for kind in ["query", "transaction"] {
                try await warm(database, connections: 4)
                // Half the rounds wait for the backends to end, half only signal them (the
                // statement may then reach a backend that has yet to act on the signal).
                let timeout = round % 2 == 0 ? "" : ", 5000"
                let outcome = try await burners.spinning {
                    terminated += try await TestServer.admin.value.query(
                        "SELECT pg_terminate_backend(pid\(timeout)) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
                        [name]).count
                    return await Result {
                        kind == "query"
                            ? try await database.query("SELECT 42")[0].decode(Int.self, at: 0)
                            : try await database.transaction { try await $0.query("SELECT 42")[0].decode(Int.self, at: 0) }
                    }
                }
                switch outcome {
                case .success(let answer): #expect(answer == 42)
                case .failure(let error): failures.append("round \(round), \(kind): \(error)")
                }
            }
        }
        print("""
            terminated pooled connections: \(2 * rounds) statements (\(rounds) queries, \(rounds) transactions) after \
            \(terminated) backends terminated, \(burners.count) CPU burners on \(ProcessInfo.processInfo.activeProcessorCount) cores, \
            \(ContinuousClock.now - started): \(failures.count) failed; \
            \(count("dropped an idle connection")) idle connections found closed at checkout, \
            \(count(Self.ranAgain)) statements run again
            """)
        for failure in failures.prefix(5) { print("  \(failure)") }
        #expect(failures.isEmpty)
        #expect(terminated >= 2 * rounds)
    }

    /// Opens `connections` connections at once and leaves them idle in the pool.
    private func warm(_ database: Database, connections: Int) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<connections { group.addTask { try await database.query("SELECT pg_sleep(0.02)") } }
            try await group.waitForAll()
        }
    }

    #if os(Linux)
    @Test("a backend told to end before it read the statement: its FATAL answers the marker, and the statement runs once, elsewhere",
          .enabled(if: stopsBackends, "stops a backend of the local test server"))
    func endedBeforeReading() async throws {
        let database = try await makeDatabase(maximumConnections: 1)
        defer { database.close() }
        try await database.query("CREATE TABLE runs (id serial PRIMARY KEY, kind text NOT NULL)")
        let insert = "INSERT INTO runs (kind) VALUES ($1)"
        // A connection of its own, open before a backend stops: the shared admin pool's may all be
        // in a DROP DATABASE (another suite's), which waits for every backend — the stopped one
        // too — to absorb a barrier, so that a terminate sent through them would never run.
        let terminator = Database(try await TestServer.shared.value.admin, maximumConnections: 1)
        defer { terminator.close() }
        _ = try await terminator.query("SELECT 1")
        for kind in ["query", "transaction", "batch"] {
            let (connection, pid) = try await database.withConnection { connection in
                // Prepared now, the statement goes out behind its marker with nothing ahead.
                try await connection.query(insert, ["ready"])
                return (connection, try await connection.query("SELECT pg_backend_pid()")[0].decode(Int32.self, at: 0))
            }
            // Stopped, the backend acts on the signal only once continued: before it reads anything more.
            kill(pid, SIGSTOP)
            defer { kill(pid, SIGCONT) }
            _ = try await terminator.query("SELECT pg_terminate_backend($1)", [pid])
            let write = Task {
                switch kind {
                case "query": try await database.query(insert, [kind])
                case "transaction": try await database.transaction { try await $0.query(insert, [kind]) }
                default:
                    // On the connection itself (the pool's most recently used one, handed out
                    // again): a batch behind its marker is not run again, it is reported so.
                    try await database.withConnection { held in
                        #expect(held === connection)
                        let outcomes = try await held.pipeline([(insert, [.text(kind)]), (insert, [.text(kind)])])
                        Issue.record("the batch was answered: \(outcomes)")
                    }
                }
            }
            #expect(try await eventually { unreadBytes(connection) > 0 }, "the statement was not sent")
            kill(pid, SIGCONT)
            let outcome = await Result { try await write.value }
            if kind == "batch" {
                let error = try #require(outcome.failure as? PostgresError)
                #expect(error.kind == .connectionLost && error.statementDidNotRun && error.sqlState == "57P01", "\(error)")
            } else {
                #expect(outcome.isSuccess, "\(outcome)")
            }
        }
        let kinds = try await database.query("SELECT kind FROM runs ORDER BY id").map { try $0.decode(String.self, column: "kind") }
        #expect(kinds == ["ready", "query", "ready", "transaction", "ready"])
        #expect(count(Self.ranAgain) == 2)
    }
    #endif

    @Test("a backend ended while the statement runs: the error is thrown and nothing is run again — a statement or a transaction's body")
    func endedWhileRunning() async throws {
        let database = try await makeDatabase(maximumConnections: 2)
        defer { database.close() }
        let name = try await database.name()
        try await database.query("CREATE SEQUENCE calls")
        let bodies = Locked(0)
        for kind in ["query", "transaction"] {
            let task = Task {
                if kind == "query" {
                    try await database.query("SELECT nextval('calls'), pg_sleep(600) /* ended while running */")
                } else {
                    try await database.transaction { connection in
                        bodies.withLock { $0 += 1 }
                        try await connection.query("SELECT nextval('calls'), pg_sleep(600) /* ended while running */")
                    }
                }
            }
            let running = "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND state = 'active' AND query LIKE '%ended while running%'"
            // Slow to show under the whole suite's load (CPU burners included): a generous deadline.
            guard try await eventually(timeout: .seconds(180), { try await !TestServer.admin.value.query(running, [name]).isEmpty }) else {
                task.cancel()
                Issue.record("the \(kind)'s statement never showed as running")
                return
            }
            _ = try await TestServer.admin.value.query("SELECT pg_terminate_backend(pid, 5000) FROM (\(running)) AS active", [name])
            let error = await Result { try await task.value }.failure as? PostgresError
            #expect(error?.kind == .connectionLost && error?.statementDidNotRun == false && error?.sqlState == "57P01", "\(kind): \(String(describing: error))")
        }
        // Once each: a statement run again would have taken a second number.
        #expect(try await database.query("SELECT last_value FROM calls")[0].decode(Int.self, at: 0) == 2)
        #expect(bodies.withLock { $0 } == 1)
        #expect(count(Self.ranAgain) == 0)
    }

    @Test("a marker answered with the statement's own error (deallocated): prepared again and run once, on the same connection")
    func markerOfDeallocatedStatement() async throws {
        let database = try await makeDatabase(maximumConnections: 1)
        defer { database.close() }
        try await database.query("CREATE TABLE runs (id serial PRIMARY KEY)")
        let insert = "INSERT INTO runs DEFAULT VALUES RETURNING pg_backend_pid() AS pid"
        let first = try await database.query(insert)[0].decode(Int32.self, column: "pid")
        try await database.withConnection { try await $0.execute(script: "DEALLOCATE ALL") }
        let second = try await database.query(insert)[0].decode(Int32.self, column: "pid")
        #expect(second == first)
        #expect(try await database.query("SELECT count(*) FROM runs")[0].decode(Int.self, at: 0) == 2)
        #expect(count(Self.ranAgain) == 0)
    }
}

/// Bytes sent on `connection`'s socket that the server has not read yet (`SIOCOUTQ`: over a
/// unix socket, what waits in the peer's receive queue).
private func unreadBytes(_ connection: Connection) -> Int32 {
    #if os(Linux)
    var count: Int32 = 0
    return ioctl(connection.idleCheck.socket, UInt(TIOCOUTQ), &count) == 0 ? count : 0
    #else
    return 0
    #endif
}

extension Result {
    var failure: Failure? { if case .failure(let error) = self { error } else { nil } }
}
