import Foundation
@testable import Repository
import Testing

/// Statements are sent with libpq's non-blocking API and their results awaited on the shared
/// poller thread — with epoll (Linux's default) and with the portable `poll(2)` source.
@Suite("Non-blocking statements")
struct NonBlockingStatementTests {
    static let pollers = ["default": SocketPoller.shared, "poll(2)": SocketPoller(readiness: PollReadiness())]

    let configuration: ConnectionConfiguration

    init() async throws {
        configuration = try await TestServer.makeDatabaseConfiguration()
    }

    func connect(_ poller: String) async throws -> Connection {
        try await Connection.connect(configuration, poller: Self.pollers[poller]!)
    }

    @Test("a parameter larger than the socket's buffer is sent, and a result of many packets read", arguments: ["default", "poll(2)"])
    func largeParameterAndResult(poller: String) async throws {
        let connection = try await connect(poller)
        let text = String(repeating: "abcdefgh", count: 2_000_000)  // 16 MB: libpq must flush it in parts
        let row = try await connection.query("SELECT length($1::text) AS sent, repeat('y', 5000000) AS big", [text])[0]
        #expect(try row.decode(Int.self, column: "sent") == text.utf8.count)
        #expect(try row.decode(String.self, column: "big").utf8.count == 5_000_000)
    }

    @Test("50 tasks sharing one connection each get their own result", arguments: ["default", "poll(2)"])
    func concurrentStatementsTakeTurns(poller: String) async throws {
        let connection = try await connect(poller)
        let results = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for n in 1...50 {
                group.addTask { (n, try await connection.query("SELECT $1::int * 2 AS twice", [n])[0].decode(Int.self, column: "twice")) }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        #expect(results.count == 50)
        #expect(results.allSatisfy { $0.value == $0.key * 2 })
    }

    @Test("a script returns its last result; a failing statement in it is the error, and the connection goes on", arguments: ["default", "poll(2)"])
    func scripts(poller: String) async throws {
        let connection = try await connect(poller)
        let last = try await connection.execute(script: "CREATE TEMP TABLE t (x int); INSERT INTO t VALUES (1), (2); SELECT count(*)::text AS n FROM t")
        #expect(try last[0].decode(String.self, column: "n") == "2")  // scripts answer in text
        let error = await #expect(throws: PostgresError.self) {
            try await connection.execute(script: "SELECT 1; SELECT * FROM no_such_table; SELECT 3")
        }
        #expect(error?.sqlState == "42P01")
        #expect(try await connection.query("SELECT 4 AS n")[0].decode(Int.self, column: "n") == 4)
    }

    @Test("a cancelled statement stops on the server", arguments: ["default", "poll(2)"])
    func cancellation(poller: String) async throws {
        let connection = try await connect(poller)
        let sleeping = Task { try await connection.query("SELECT pg_sleep(600)") }
        try await waitUntilActive(connection, "pg_sleep(600)")
        sleeping.cancel()
        await #expect(throws: CancellationError.self) { try await sleeping.value }
    }

    @Test("a backend terminated while its statement waits ends that statement as lost", arguments: ["default", "poll(2)"])
    func terminatedWhileWaiting(poller: String) async throws {
        let connection = try await connect(poller)
        let pid = try await connection.query("SELECT pg_backend_pid()")[0].decode(Int32.self, at: 0)
        let sleeping = Task { try await connection.query("SELECT pg_sleep(600)") }
        try await waitUntilActive(connection, "pg_sleep(600)")
        try await TestServer.admin.value.query("SELECT pg_terminate_backend($1::int)", [pid])
        let error = await #expect(throws: PostgresError.self) { try await sleeping.value }
        #expect(error?.kind == .connectionLost)
        let (lost, reusable) = (connection.wasLost.load(ordering: .relaxed), connection.isReusable.load(ordering: .relaxed))
        #expect(lost)
        #expect(!reusable)
        #expect(await !connection.isOpen)
    }

    @Test("COPY is refused with a clear error, and the connection is not left inside it")
    func copyRefused() async throws {
        let connection = try await connect("default")
        let error = await #expect(throws: PostgresError.self) { try await connection.execute(script: "COPY (SELECT 1) TO STDOUT") }
        #expect(error?.message.contains("COPY is not supported") == true)
        let next = await #expect(throws: PostgresError.self) { try await connection.query("SELECT 1") }
        #expect(next?.kind == .closed)
    }

    /// Waits (at most a minute) until a statement containing `text` runs in this database.
    private func waitUntilActive(_ connection: Connection, _ text: String) async throws {
        let observer = try await Connection.connect(configuration)
        let found = try await eventually(timeout: .seconds(60)) {
            try await !observer.query("SELECT 1 FROM pg_stat_activity WHERE state = 'active' AND query = $1",
                                      ["SELECT \(text)"]).isEmpty
        }
        #expect(found)
    }
}

@Suite("Statement turns")
struct StatementTurnsTests {
    @Test("the first caller takes the turn; the others get it one by one, in order; then it is free")
    func turnsInOrder() async {
        var turns = StatementTurns()
        let first = turns.take(), second = turns.take()
        #expect(first)
        #expect(!second)
        let order = Locked<[Int]>([])
        await withTaskGroup(of: Void.self) { group in
            // Each waiter records itself when resumed; the queue is filled synchronously here.
            var continuations: [CheckedContinuation<Void, Never>] = []
            for n in 1...3 {
                let (stream, continuation) = AsyncStream<CheckedContinuation<Void, Never>>.makeStream()
                group.addTask {
                    await withCheckedContinuation { waiter in continuation.yield(waiter) }
                    order.withLock { $0.append(n) }
                }
                for await waiter in stream { continuations.append(waiter); break }
            }
            for waiter in continuations { turns.enqueue(waiter) }
            while let next = turns.pass() {
                let before = order.withLock { $0.count }
                next.resume()
                while order.withLock({ $0.count }) == before { await Task.yield() }
            }
        }
        #expect(order.withLock { $0 } == [1, 2, 3])
        let free = turns.take()
        #expect(free, "free again once the last waiter's turn ended")
    }
}
