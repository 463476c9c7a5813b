import Foundation
@testable import Repository
import Testing

/// Statements are prepared once per connection; `ALTER TABLE … ADD COLUMN` changes what a
/// prepared `SELECT *` or `RETURNING *` returns, and PostgreSQL then refuses to run it. Writes
/// that go through a transaction must not fail for good after such a migration.
@Suite("Writes after a schema change")
struct SchemaChangeWriteTests {
    struct Gauge: Record, Equatable {
        static let tableName = "gauges"
        var id: Int64
        var reading: Int64
        var label: String?
    }

    @Test("a transaction whose statement was prepared before ALTER TABLE fails once (0A000), and the next one prepares it anew")
    func plainTransaction() async throws {
        let database = try await TestServer.makeDatabase(maximumConnections: 1)
        defer { database.close() }
        try await database.query("CREATE TABLE tx (a int)")
        try await database.query("INSERT INTO tx VALUES (1)")
        let select = { (connection: Connection) in try await connection.query("SELECT * FROM tx WHERE a = $1", [1]).columns.count }
        #expect(try await database.transaction(select) == 1)
        try await psql("ALTER TABLE tx ADD COLUMN b int", database: database)
        let failure = await #expect(throws: PostgresError.self) { try await database.transaction(select) }
        #expect(failure?.sqlState == "0A000")
        #expect(try await database.transaction(select) == 2)
        #expect(try await database.transaction(select) == 2)
    }

    @Test("live writes that run in a transaction (a table with a generated column) go on succeeding after another process adds a column")
    func generatedColumnTable() async throws {
        let database = try await TestServer.makeDatabase(maximumConnections: 3)
        defer { database.close() }
        try await database.withConnection { connection in
            try await connection.execute(script: """
                CREATE TABLE gauges (id bigint PRIMARY KEY, reading bigint NOT NULL, label text,
                                     doubled bigint GENERATED ALWAYS AS (reading * 2) STORED);
                INSERT INTO gauges (id, reading) SELECT n, 0 FROM generate_series(1, 6) n;
                """)
        }
        try await LiveSchema.enable("gauges", on: database)
        let repository = LiveRepository(database)
        defer { repository.close() }
        let errors = ErrorLog(repository)
        var gauges: [Var<Gauge>] = []
        for id in Int64(1)...6 { gauges.append(try await repository.read(Gauge.self, id: id)) }
        /// Every handle saves at once, so that each pooled connection prepares the write.
        func saveAll(_ reading: Int64) async throws {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for gauge in gauges {
                    gauge[\.reading].value = reading
                    gauge[\.label].value = "round \(reading)"  // NULL before: written in a transaction too
                    group.addTask { try await gauge.save() }
                }
                try await group.waitForAll()
            }
        }
        try await saveAll(1)
        try await psql("ALTER TABLE gauges ADD COLUMN note text", database: database)
        for round in Int64(2)...4 {
            try await saveAll(round)
            let stored = try await database.query("SELECT count(*) FROM gauges WHERE reading = $1 AND doubled = $2", [round, round * 2])
            #expect(try stored[0].decode(Int64.self, at: 0) == 6)
        }
        #expect(errors.errors.all.isEmpty, "\(errors.errors.all)")
    }

    @Test("an aggregate's writes go on succeeding after another process adds columns to its tables")
    func aggregate() async throws {
        typealias Order = OwnKeyAggregateTests.Order
        let database = try await TestServer.makeDatabase(maximumConnections: 2)
        defer { database.close() }
        try await database.withConnection { connection in
            try await connection.execute(script: """
                CREATE TABLE orders (code text PRIMARY KEY, customer text NOT NULL);
                CREATE TABLE order_lines (line_id uuid PRIMARY KEY, order_code text NOT NULL REFERENCES orders ON DELETE CASCADE,
                                          position integer NOT NULL, item text NOT NULL);
                INSERT INTO orders VALUES ('A-1', 'Ada'), ('B-2', 'Grace');
                """)
        }
        try await LiveSchema.enable("orders", on: database)
        try await LiveSchema.enable("order_lines", on: database)
        let repository = LiveRepository(database)
        defer { repository.close() }
        let orders = [try await repository.read(Order.self, id: "A-1"), try await repository.read(Order.self, id: "B-2")]
        func append(_ item: String) async throws {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for order in orders {
                    order[\.lines].value.append(.init(lineId: UUID(), item: item))
                    order[\.customer].value += "."
                    group.addTask { try await order.save() }
                }
                try await group.waitForAll()
            }
        }
        try await append("tea")
        try await psql("ALTER TABLE order_lines ADD COLUMN note text; ALTER TABLE orders ADD COLUMN extra int", database: database)
        for item in ["scones", "jam"] { try await append(item) }
        let lines = try await database.query("SELECT order_code, string_agg(item, ',' ORDER BY position) FROM order_lines GROUP BY 1 ORDER BY 1")
        #expect(try lines.map { try $0.decode(String.self, at: 1) } == ["tea,scones,jam", "tea,scones,jam"])
    }
}
