import Foundation
@testable import Repository
import Testing

/// Statements sent together in libpq's pipeline mode: each its own transaction, each caller
/// its own outcome — with failures, a schema change and a lost connection in the batch.
@Suite("Pipelined statements")
struct PipelineTests {
    let configuration: ConnectionConfiguration

    init() async throws {
        configuration = try await TestServer.makeDatabaseConfiguration()
        let setup = try await Connection.connect(configuration)
        try await setup.execute(script: """
            CREATE TABLE items (id int PRIMARY KEY, n int NOT NULL CHECK (n >= 0));
            INSERT INTO items SELECT g, 0 FROM generate_series(1, 300) g;
            """)
    }

    static let update = "UPDATE items SET n = n + $2 WHERE id = $1 RETURNING *"

    @Test("a failing statement fails alone: the others commit, and each answer goes to its own statement")
    func failuresStayApart() async throws {
        let connection = try await Connection.connect(configuration)
        let outcomes = try await connection.pipeline([
            (Self.update, [.text("1"), .text("5")]),
            (Self.update, [.text("2"), .text("-5")]),          // violates the CHECK
            ("SELECT 1 / $1::int AS x", [.text("0")]),         // division by zero
            (Self.update, [.text("3"), .text("7")]),
            ("SELECT $1::text AS t", [.text("a\u{0}b")]),      // NUL: refused before it is sent
        ])
        #expect(outcomes.count == 5)
        #expect(try outcomes[0].get()[0].decode(Int.self, column: "n") == 5)
        #expect(try outcomes[3].get()[0].decode(Int.self, column: "id") == 3)
        #expect(try outcomes[3].get()[0].decode(Int.self, column: "n") == 7)
        #expect(Self.failure(outcomes[1])?.sqlState == "23514")
        #expect(Self.failure(outcomes[2])?.sqlState == "22012")
        #expect(Self.failure(outcomes[4])?.kind == .invalidParameter)
        let rows = try await connection.query("SELECT id, n FROM items WHERE id <= 3 ORDER BY id")
        #expect(try rows.map { try $0.decode(Int.self, column: "n") } == [5, 0, 7])
        let reusable = connection.isReusable.load(ordering: .relaxed)
        #expect(reusable)
        #expect(try await connection.query("SELECT 42 AS n")[0].decode(Int.self, column: "n") == 42)
    }

    @Test("a statement prepared before a schema change is prepared again, inside a pipeline too")
    func schemaChange() async throws {
        let connection = try await Connection.connect(configuration)
        _ = try await connection.pipeline([(Self.update, [.text("10"), .text("1")]), (Self.update, [.text("11"), .text("1")])])
        try await connection.execute(script: "ALTER TABLE items ADD COLUMN note text NOT NULL DEFAULT 'new'")
        let outcomes = try await connection.pipeline([(Self.update, [.text("10"), .text("1")]), (Self.update, [.text("11"), .text("1")])])
        for outcome in outcomes {
            #expect(try outcome.get()[0].decode(String.self, column: "note") == "new")
            #expect(try outcome.get()[0].decode(Int.self, column: "n") == 2)
        }
    }

    @Test("a connection lost while a pipeline waits fails every statement still unanswered as lost")
    func lostConnection() async throws {
        let connection = try await Connection.connect(configuration)
        let pid = try await connection.query("SELECT pg_backend_pid() AS pid")[0].decode(Int.self, column: "pid")
        let running = Task {
            try await connection.pipeline([
                (Self.update, [.text("20"), .text("1")]),
                ("SELECT pg_sleep(600)", []),
                (Self.update, [.text("21"), .text("1")]),
            ])
        }
        let admin = try await Connection.connect(configuration)
        #expect(try await eventually(timeout: .seconds(60)) {
            try await !admin.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND state = 'active' AND query = 'SELECT pg_sleep(600)'", [pid]).isEmpty
        })
        _ = try await admin.query("SELECT pg_terminate_backend($1)", [pid])
        let outcomes = try await running.value
        #expect(try outcomes[0].get()[0].decode(Int.self, column: "n") == 1)
        #expect(Self.failure(outcomes[1])?.kind == .connectionLost)
        #expect(Self.failure(outcomes[2])?.kind == .connectionLost)
        let reusable = connection.isReusable.load(ordering: .relaxed)
        #expect(!reusable)
    }

    @Test("a connection lost before a batch goes out throws, marked as not sent, so the batch may go elsewhere")
    func lostBeforeSending() async throws {
        let connection = try await Connection.connect(configuration)
        let pid = try await connection.query("SELECT pg_backend_pid() AS pid")[0].decode(Int.self, column: "pid")
        let admin = try await Connection.connect(configuration)
        _ = try await admin.query("SELECT pg_terminate_backend($1, 10000)", [pid])
        let error = await #expect(throws: PostgresError.self) {
            try await connection.pipeline([(Self.update, [.text("70"), .text("1")]), ("SELECT $1::int AS n", [.text("1")])])
        }
        #expect(error?.kind == .connectionLost)
        #expect(error?.statementWasNotSent == true)
        #expect(try await admin.query("SELECT n FROM items WHERE id = 70")[0].decode(Int.self, column: "n") == 0)
    }

    @Test("300 tasks writing at once through the pool: batches form, and every task gets its own row")
    func concurrentCallers() async throws {
        let metrics = RecordingMetrics()
        let database = Database(configuration, maximumConnections: 2, metricsFactory: metrics)
        let returned = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for id in 1...300 {
                group.addTask {
                    let row = try await database.pipelined(Self.update, [.text(String(id)), .text("100")])[0]
                    return (id, try row.decode(Int.self, column: "id"))
                }
            }
            return try await group.reduce(into: [Int: Int]()) { $0[$1.0] = $1.1 }
        }
        #expect(returned.count == 300)
        #expect(returned.allSatisfy { $0.key == $0.value })
        let sizes = metrics.values("postgres_pipeline_batch_size")
        #expect(sizes.reduce(0, +) == 300)
        #expect(sizes.contains { $0 > 1 }, "no batch held more than one statement: \(sizes.count) batches")
        let total = try await database.query("SELECT sum(n)::int AS total FROM items WHERE id <= 300")[0]
        #expect(try total.decode(Int.self, column: "total") >= 300 * 100)
        database.close()
    }

    @Test("a statement held up by a lock holds up only its own lane: the other statements go out", .timeLimit(.minutes(2)))
    func lockedStatementHoldsOneLane() async throws {
        let database = Database(configuration, maximumConnections: 4)  // two lanes
        let locker = try await Connection.connect(configuration)
        try await locker.execute(script: "BEGIN; SELECT * FROM items WHERE id = 30 FOR UPDATE")
        let held = Task { try await database.pipelined(Self.update, [.text("30"), .text("1")]) }
        let admin = try await Connection.connect(configuration)
        #expect(try await eventually(timeout: .seconds(60)) {
            try await !admin.query("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'UPDATE items%'").isEmpty
        })
        for id in 31...40 {  // one after another: each finds the other lane free, or queues for it
            let row = try await database.pipelined(Self.update, [.text(String(id)), .text("1")])[0]
            #expect(try row.decode(Int.self, column: "id") == id)
        }
        try await locker.execute(script: "COMMIT")
        #expect(try await held.value[0].decode(Int.self, column: "n") == 1)
        database.close()
    }

    @Test("in a pipeline, a statement with others behind it gives up waiting for a lock; the last one waits", .timeLimit(.minutes(2)))
    func lockWaitsAreBounded() async throws {
        let connection = try await Connection.connect(configuration)
        let locker = try await Connection.connect(configuration)
        try await locker.execute(script: "BEGIN; SELECT * FROM items WHERE id IN (50, 52) FOR UPDATE")
        let outcomes = try await connection.pipeline([(Self.update, [.text("50"), .text("1")]), (Self.update, [.text("51"), .text("1")])])
        #expect(Self.failure(outcomes[0])?.sqlState == "55P03")  // gave up, changed nothing
        #expect(try outcomes[1].get()[0].decode(Int.self, column: "n") == 1)
        let pid = try await connection.query("SELECT pg_backend_pid() AS pid")[0].decode(Int.self, column: "pid")
        let last = Task { try await connection.pipeline([(Self.update, [.text("53"), .text("1")]), (Self.update, [.text("52"), .text("1")])]) }
        let admin = try await Connection.connect(configuration)
        #expect(try await eventually(timeout: .seconds(60)) {  // well past the bound, the last statement still waits
            try await !admin.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock' AND now() - query_start > interval '300 ms'", [pid]).isEmpty
        })
        try await locker.execute(script: "COMMIT")
        let waited = try await last.value
        #expect(try waited[1].get()[0].decode(Int.self, column: "n") == 1)
        let rows = try await connection.query("SELECT n FROM items WHERE id IN (50, 51) ORDER BY id")
        #expect(try rows.map { try $0.decode(Int.self, column: "n") } == [0, 1])
        #expect(try await connection.query("SHOW lock_timeout")[0].decode(String.self, at: 0) == "0")  // local to each transaction
    }

    @Test("a batched write that waits for a lock does not hold up the writes behind it: it runs again alone", .timeLimit(.minutes(2)))
    func heldWriteRunsAlone() async throws {
        let database = Database(configuration, maximumConnections: 1)  // one lane: later writes queue
        let locks = try await Connection.connect(configuration), blocker = try await Connection.connect(configuration)
        try await locks.execute(script: "BEGIN; SELECT * FROM items WHERE id = 60 FOR UPDATE")
        try await blocker.execute(script: "BEGIN; SELECT * FROM items WHERE id = 62 FOR UPDATE")
        let first = Task { try await database.pipelined(Self.update, [.text("62"), .text("1")]) }  // takes the lane, waits
        func queued(_ count: Int) async throws -> Bool {
            try await eventually(timeout: .seconds(60)) { database.pipelineQueue.withLock { $0.waiting.count } == count }
        }
        #expect(try await eventually(timeout: .seconds(60)) { database.pipelineQueue.withLock { $0.underWay } == 1 })
        let held = Task { try await database.pipelined(Self.update, [.text("60"), .text("1")]) }
        #expect(try await queued(1))
        let behind = Task { try await database.pipelined(Self.update, [.text("61"), .text("1")]) }
        #expect(try await queued(2))
        try await blocker.execute(script: "COMMIT")  // the lane frees: [60, 61] go out together
        #expect(try await first.value[0].decode(Int.self, column: "n") == 1)
        #expect(try await behind.value[0].decode(Int.self, column: "n") == 1)  // while 60 is still locked
        try await locks.execute(script: "COMMIT")
        #expect(try await held.value[0].decode(Int.self, column: "n") == 1)
        database.close()
    }

    private static func failure(_ outcome: Result<QueryResult, PostgresError>) -> PostgresError? {
        if case .failure(let error) = outcome { return error }
        return nil
    }
}
