import Foundation
import Repository
import Testing

@Suite("Connection")
struct ConnectionTests {
    let database: Database

    init() async throws {
        database = try await TestServer.makeDatabase(maximumConnections: 1)
    }

    @Test("repeated SQL is prepared once per connection and reused")
    func preparedStatementReuse() async throws {
        let sql = "SELECT $1::int + 1 AS next"
        let counts = try await database.withConnection { connection in
            var results: [Int] = []
            for value in 1...3 {
                results.append(try await connection.query(sql, [value])[0].decode(Int.self, column: "next"))
            }
            let prepared = try await connection.query("SELECT count(*) FROM pg_prepared_statements WHERE statement = $1", [sql])
            return (results, try prepared[0].decode(Int.self, at: 0))
        }
        #expect(counts.0 == [2, 3, 4])
        #expect(counts.1 == 1)
    }

    @Test("a prepared statement invalidated by a schema change is prepared again")
    func stalePlan() async throws {
        try await database.query("CREATE TABLE t (a int)")
        try await database.query("INSERT INTO t VALUES (1)")
        #expect(try await database.query("SELECT * FROM t").columns.count == 1)
        try await database.query("ALTER TABLE t ADD COLUMN b int")
        #expect(try await database.query("SELECT * FROM t").columns.count == 2)
    }

    @Test("rows with no columns are still rows: SELECT FROM a table counts its rows (helper 77 found 0)")
    func rowsWithoutColumns() async throws {
        let result = try await database.query("SELECT FROM generate_series(1, 3)")
        #expect(result.columns.isEmpty && result.count == 3 && result.affectedRows == 3)
        struct Nothing: Decodable, Equatable {}
        #expect(try result.decode(Nothing.self) == [Nothing(), Nothing(), Nothing()])
        #expect(try await database.query("SELECT FROM generate_series(1, 0)").isEmpty)
    }

    @Test("a transaction commits when its body returns")
    func commit() async throws {
        try await database.query("CREATE TABLE accounts (id int PRIMARY KEY, balance int)")
        try await database.transaction { connection in
            try await connection.query("INSERT INTO accounts VALUES (1, 100)")
            try await connection.query("INSERT INTO accounts VALUES (2, 0)")
        }
        #expect(try await database.query("SELECT sum(balance) FROM accounts")[0].decode(Int.self, at: 0) == 100)
    }

    @Test("a transaction rolls back when its body throws, and the error comes through")
    func rollback() async throws {
        struct Abort: Error {}
        try await database.query("CREATE TABLE items (id int PRIMARY KEY)")
        await #expect(throws: Abort.self) {
            try await database.transaction { connection in
                try await connection.query("INSERT INTO items VALUES (1)")
                throw Abort()
            }
        }
        #expect(try await database.query("SELECT count(*) FROM items")[0].decode(Int.self, at: 0) == 0)
        // The connection went back to the pool clean: the next transaction works.
        try await database.transaction { try await $0.query("INSERT INTO items VALUES (2)") }
        #expect(try await database.query("SELECT count(*) FROM items")[0].decode(Int.self, at: 0) == 1)
    }

    @Test("a transaction inside a transaction is a savepoint: it never ends the outer one; its failure undoes its own work alone")
    func nestedTransactions() async throws {
        struct Abort: Error {}
        try await database.query("CREATE TABLE rows (id int PRIMARY KEY)")
        // The outer body throws after the inner one returned: nothing stays.
        await #expect(throws: Abort.self) {
            try await database.transaction { connection in
                try await connection.query("INSERT INTO rows VALUES (1)")
                try await connection.transaction { try await $0.query("INSERT INTO rows VALUES (2)") }
                try await connection.query("INSERT INTO rows VALUES (3)")
                throw Abort()
            }
        }
        #expect(try await database.query("SELECT count(*) FROM rows")[0].decode(Int.self, at: 0) == 0)
        // The inner body throws and the outer one goes on: the inner's row alone is undone.
        try await database.transaction { connection in
            try await connection.query("INSERT INTO rows VALUES (1)")
            await #expect(throws: Abort.self) {
                try await connection.transaction { inner in
                    try await inner.query("INSERT INTO rows VALUES (2)")
                    throw Abort()
                }
            }
            try await connection.query("INSERT INTO rows VALUES (3)")
        }
        let ids = try await database.query("SELECT id FROM rows ORDER BY id").map { try $0.decode(Int.self, at: 0) }
        #expect(ids == [1, 3])
    }

    @Test("a transaction from another task while one is open on the connection is refused at once, sending nothing; the open one commits its own work (a stranger's run lost a row)")
    func anotherTasksTransaction() async throws {
        try await database.query("CREATE TABLE rows (id int PRIMARY KEY)")
        try await database.transaction { connection in
            try await connection.query("INSERT INTO rows VALUES (1)")
            // Two child tasks, each with its own transaction on the shared connection.
            let outcomes = await withTaskGroup(of: (any Error)?.self) { group in
                for id in [2, 3] {
                    group.addTask {
                        do {
                            try await connection.transaction { try await $0.query("INSERT INTO rows VALUES ($1)", [id]) }
                            return nil
                        } catch { return error }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.count == 2)
            for outcome in outcomes {
                #expect((outcome as? PostgresError)?.message.contains("a transaction of another task is open on this connection") == true, "\(String(describing: outcome))")
            }
            try await connection.transaction { try await $0.query("INSERT INTO rows VALUES (4)") }  // its own task: a savepoint
        }
        let ids = try await database.query("SELECT id FROM rows ORDER BY id").map { try $0.decode(Int.self, at: 0) }
        #expect(ids == [1, 4])
        // A second task beginning while the first task's transaction is open (told by a stream,
        // not a timing): refused; the first commits; the connection is left with none open.
        try await database.withConnection { connection in
            let (opened, open) = AsyncStream<Void>.makeStream()
            let (tried, attempt) = AsyncStream<Void>.makeStream()
            async let first: Void = connection.transaction { inner in
                _ = try await inner.query("INSERT INTO rows VALUES (5)")
                open.yield()
                for await _ in tried { break }
            }
            for await _ in opened { break }
            let refused = await #expect(throws: PostgresError.self) {
                try await connection.transaction { _ = try await $0.query("INSERT INTO rows VALUES (6)") }
            }
            #expect(refused?.message.contains("a transaction of another task is open") == true)
            attempt.yield()
            try await first
            try await connection.transaction { _ = try await $0.query("INSERT INTO rows VALUES (7)") }
        }
        let after = try await database.query("SELECT id FROM rows WHERE id > 4 ORDER BY id").map { try $0.decode(Int.self, at: 0) }
        #expect(after == [5, 7])
    }

    @Test("a connection string asking for another client encoding still stores and reads UTF-8 text exactly (it stored Zoë as ZoÃ«, read back as Zoë)")
    func clientEncoding() async throws {
        try await database.query("CREATE TABLE names (name text)")
        let base = try await TestServer.connectionString(database: database.name())
        let latin = base.contains("://") ? base + (base.contains("?") ? "&" : "?") + "client_encoding=LATIN1" : base + " client_encoding=LATIN1"
        let other = Database(try base.contains("://") ? ConnectionConfiguration(url: latin) : ConnectionConfiguration(conninfo: latin), maximumConnections: 1)
        defer { other.close() }
        try await other.query("INSERT INTO names VALUES ($1)", ["Zoë"])
        #expect(try await other.query("SELECT name FROM names")[0].decode(String.self, at: 0) == "Zoë")
        let stored = try await database.query("SELECT encode(convert_to(name, 'UTF8'), 'hex'), current_setting('client_encoding') FROM names")[0]
        #expect(try stored.decode(String.self, at: 0) == "5a6fc3ab")
        #expect(try await other.query("SHOW client_encoding")[0].decode(String.self, at: 0) == "UTF8")
    }

    @Test("a nested transaction whose body caught a failed statement is rolled back and throws; the outer transaction goes on and commits")
    func nestedSwallowedFailure() async throws {
        try await database.query("CREATE TABLE accounts (id int PRIMARY KEY, v int)")
        try await database.query("INSERT INTO accounts VALUES (1, 0), (2, 0)")
        try await database.transaction { connection in
            try await connection.query("UPDATE accounts SET v = 10 WHERE id = 1")
            let inner = await #expect(throws: PostgresError.self) {
                try await connection.transaction { nested in
                    try await nested.query("UPDATE accounts SET v = 20 WHERE id = 2")
                    _ = try? await nested.query("SELECT 1/0")
                }
            }
            #expect(inner?.sqlState == "25P02")
            try await connection.query("SELECT 1")
        }
        let values = try await database.query("SELECT v FROM accounts ORDER BY id").map { try $0.decode(Int.self, at: 0) }
        #expect(values == [10, 0])
    }

    @Test("a transaction whose body sent COMMIT itself is refused at its end, not reported as committed")
    func bodyEndsItsTransaction() async throws {
        try await database.query("CREATE TABLE accounts (id int PRIMARY KEY, v int)")
        try await database.query("INSERT INTO accounts VALUES (1, 0), (2, 0)")
        for end in ["COMMIT", "ROLLBACK"] {
            let error = await #expect(throws: PostgresError.self) {
                try await database.transaction { connection in
                    try await connection.query("UPDATE accounts SET v = v + 1 WHERE id = 1")
                    try await connection.execute(script: end)
                    try await connection.query("UPDATE accounts SET v = v + 1 WHERE id = 2")
                }
            }
            #expect(error?.message.contains("the transaction's body ended it itself") == true, "\(String(describing: error))")
        }
        // The pool's connection is usable, and not left in a transaction.
        #expect(try await database.query("SELECT count(*) FROM pg_stat_activity WHERE state = 'idle in transaction' AND datname = current_database()")[0]
                .decode(Int.self, at: 0) == 0)
    }

    @Test("the application's own PREPAREd statements, named s1 to s5, do not collide with the library's")
    func ownPreparedStatements() async throws {
        try await database.withConnection { connection in
            try await connection.execute(script: (1...5).map { "PREPARE s\($0) AS SELECT \($0)" }.joined(separator: "; "))
            for n in 1...8 { #expect(try await connection.query("SELECT $1::int + \(n)", [n])[0].decode(Int.self, at: 0) == 2 * n) }
            #expect(try await connection.query("EXECUTE s3")[0].decode(Int.self, at: 0) == 3)
        }
    }

    @Test("once the connection's statement cache is full, the library deallocates its own statements only: the application's PREPAREd ones stay, also those the server forgot are skipped")
    func fullCacheKeepsOwnPreparedStatements() async throws {
        try await database.withConnection { connection in
            try await connection.execute(script: "PREPARE mine AS SELECT 41 + 1; PREPARE live_mine AS SELECT 7")
            for n in 1...300 { #expect(try await connection.query("SELECT $1::int + \(n)", [n])[0].decode(Int.self, at: 0) == 2 * n) }
            // The server forgets all of them; the library finds out statement by statement.
            try await connection.execute(script: "DEALLOCATE ALL; PREPARE mine AS SELECT 41 + 1; PREPARE live_mine AS SELECT 7")
            for n in 301...1200 { #expect(try await connection.query("SELECT $1::int + \(n)", [n])[0].decode(Int.self, at: 0) == 2 * n) }
            #expect(try await connection.query("EXECUTE mine")[0].decode(Int.self, at: 0) == 42)
            #expect(try await connection.query("EXECUTE live_mine")[0].decode(Int.self, at: 0) == 7)
            let held = try await connection.query("SELECT count(*) FROM pg_prepared_statements WHERE name LIKE 'live\\_s%'")[0].decode(Int.self, at: 0)
            #expect(held > 0 && held < 900, "the library's prepared statements are bounded: \(held)")
        }
    }

    @Test("statements with thousands of parameters, up to PostgreSQL's 65,535, run through the pool: a bulk INSERT commits once and says so")
    func manyParameters() async throws {
        for count in [7_498, 7_499, 20_000, 65_535] {
            let sql = "SELECT cardinality(ARRAY[" + (1...count).map { "$\($0)::int" }.joined(separator: ",") + "])"
            #expect(try await database.query(sql, (1...count).map { $0 })[0].decode(Int.self, at: 0) == count)
        }
        try await database.query("CREATE TABLE bulk (a int, b int, c int, d int, e int, f int, g int, h int)")
        let rows = (0..<1_000).map { row in "(" + (1...8).map { "$\(row * 8 + $0)" }.joined(separator: ",") + ")" }
        try await database.query("INSERT INTO bulk VALUES " + rows.joined(separator: ","), (0..<8_000).map { $0 })
        #expect(try await database.query("SELECT count(*) FROM bulk")[0].decode(Int.self, at: 0) == 1_000)
    }

    @Test("a failure caught inside a transaction makes COMMIT throw instead of passing silently")
    func swallowedFailure() async throws {
        try await database.query("CREATE TABLE items (id int PRIMARY KEY)")
        let error = await #expect(throws: PostgresError.self) {
            try await database.transaction { connection in
                try await connection.query("INSERT INTO items VALUES (1)")
                _ = try? await connection.query("INSERT INTO items VALUES (1)")
            }
        }
        #expect(error?.sqlState == "25P02")
        #expect(try await database.query("SELECT count(*) FROM items")[0].decode(Int.self, at: 0) == 0)
    }

    @Test("a terminated backend is reported as lost, and the pool replaces it")
    func terminatedBackend() async throws {
        let pid = try await database.query("SELECT pg_backend_pid()")[0].decode(Int32.self, at: 0)
        // While idle in the pool: the next statement runs on a fresh connection, transparently.
        try await TestServer.admin.value.query("SELECT pg_terminate_backend($1::int, 10000)", [pid])
        _ = try await eventually { try await TestServer.admin.value.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [pid]).isEmpty }
        let next = try await database.query("SELECT pg_backend_pid()")[0].decode(Int32.self, at: 0)
        #expect(next != pid)
        // While in use: the statement's error says the connection was lost.
        let error = await #expect(throws: PostgresError.self) {
            try await database.withConnection { connection in
                try await TestServer.admin.value.query("SELECT pg_terminate_backend($1::int, 10000)", [next])
                _ = try await eventually { try await TestServer.admin.value.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [next]).isEmpty }
                try await connection.query("SELECT 1")
            }
        }
        #expect(error?.kind == .connectionLost)
        #expect(try await database.query("SELECT 41 + 1")[0].decode(Int.self, at: 0) == 42)
    }

    @Test("multi-statement scripts run through the simple protocol")
    func script() async throws {
        try await database.withConnection { connection in
            try await connection.execute(script: "CREATE TABLE s (a int); INSERT INTO s VALUES (1), (2); -- comment; with semicolon")
        }
        #expect(try await database.query("SELECT count(*) FROM s")[0].decode(Int.self, at: 0) == 2)
    }
}
