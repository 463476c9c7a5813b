import Foundation
import IdentifiedCollections
@testable import Repository
import Testing

/// Rows from the logical replication stream taken as they come, without reading the table:
/// once a live value holds a version the stream delivered, the next row the stream delivers
/// is the state after it (see ``SyncState/streamed(_:version:at:row:sequence:)``).
@Suite("Rows from the replication stream")
struct StreamedRowTests {
    typealias EveryType = LiveColumnTypesTests.EveryType

    struct Doubled: Record, Equatable {
        static let tableName = "doubled"
        var id: Int64
        var a: Int64
        var b: Int64
    }

    struct Ledger: Record, Equatable {
        static let tableName = "ledger"
        var id: Int64
        var code: String
        var n: Int64
    }

    struct Secret: Record, Equatable {
        static let tableName = "secrets"
        var id: Int64
        var n: Int64
    }

    let database: Database
    let configuration: ConnectionConfiguration

    init() async throws {
        configuration = try await TestServer.makeDatabaseConfiguration(replication: true)
        database = Database(configuration)
        try await database.withConnection { connection in
            try await connection.execute(script: LiveColumnTypesTests.schema + """
                ;
                CREATE TABLE doubled (id bigint PRIMARY KEY, a bigint NOT NULL, b bigint GENERATED ALWAYS AS (a * 2) STORED);
                INSERT INTO doubled (id, a) VALUES (1, 1);
                CREATE DOMAIN account AS bigint CHECK (VALUE > 0);
                CREATE DOMAIN code AS text;
                CREATE TABLE ledger (id bigint PRIMARY KEY, code code NOT NULL, n account NOT NULL);
                INSERT INTO ledger VALUES (7, 'a', 1);
                CREATE TABLE secrets (id bigint PRIMARY KEY, n bigint NOT NULL);
                ALTER TABLE secrets ENABLE ROW LEVEL SECURITY;
                CREATE POLICY visible ON secrets USING (n < 100);
                INSERT INTO secrets VALUES (1, 1);
                CREATE TABLE many (id bigint PRIMARY KEY, n bigint NOT NULL);
                INSERT INTO many SELECT i, 0 FROM generate_series(1, \(Self.manyRows)) AS i;
                """)
        }
        for table in ["every_type", "doubled", "ledger", "secrets", "many"] { try await LiveSchema.publish(table, on: database) }
    }

    struct Many: Record, Equatable {
        static let tableName = "many"
        var id: Int64
        var n: Int64
    }

    /// Rows one statement changes at once.
    static let manyRows = 768

    @Test("statements changing many rows at once: their rows are taken in one pass, and every handle ends at its row")
    func manyRowsAtOnce() async throws {
        let repository = LiveRepository(database, changes: .logicalReplication)
        defer { repository.close() }
        var handles: [Var<Many>] = []
        for id in 1...Self.manyRows { handles.append(try await repository.read(Many.self, id: Int64(id))) }
        let writer = Database(configuration, maximumConnections: 1)
        defer { writer.close() }
        for round in 1...4 {
            let taken = repository.rowsFromStream
            try await writer.query("UPDATE many SET n = $1", [round])
            #expect(try await eventually { handles.allSatisfy { $0.value.n == Int64(round) } }, "round \(round)")
            // The first round gives each value its streamed version; from the second, every row is taken.
            if round > 1 {
                // Counted once its part is over, a moment after the values show.
                #expect(try await eventually { repository.rowsFromStream - taken == Self.manyRows }, "round \(round): \(repository.rowsFromStream - taken) taken")
            }
        }
    }

    /// `count` updates of `table`'s row by another connection, each waited for until `arrived`;
    /// the rows the repository read and took from the stream for all but the first.
    func update(_ table: String, _ count: Int, _ repository: LiveRepository, arrived: (Int) async throws -> Bool) async throws -> (read: Int, taken: Int) {
        let writer = Database(configuration, maximumConnections: 1)
        defer { writer.close() }
        var (read, taken) = (0, 0)
        for value in 2...count + 1 {
            let before = (repository.rowsRead, repository.rowsFromStream)
            try await writer.query("UPDATE \(table) SET n = $1", [value])
            #expect(try await eventually { try await arrived(value) }, "update \(value) of \(table) did not arrive")
            if value > 2 { (read, taken) = (read + repository.rowsRead - before.0, taken + repository.rowsFromStream - before.1) }
        }
        return (read, taken)
    }

    @Test("under a live query, a statement changing more rows than the router places at once is read, one statement per 1,000 rows; after it, a row's next change is placed with no read")
    func largeBatchUnderQuery() async throws {
        let repository = LiveRepository(database, changes: .logicalReplication)
        defer { repository.close() }
        let all = try await repository.readAll(Many.self, orderBy: [.ascending(\.id)])
        let writer = Database(configuration, maximumConnections: 1)
        defer { writer.close() }
        #expect(Self.manyRows > RecordQueryRouter<Many>.mostStreamedRowsPlaced)
        let before = (repository.rowsRead, repository.rowsFromStream)
        try await writer.query("UPDATE many SET n = 1")
        #expect(try await eventually { all.value.allSatisfy { $0.n == 1 } })
        #expect(repository.rowsRead - before.0 == Self.manyRows && repository.rowsFromStream == before.1)
        for round in 2...3 {
            let (read, taken) = (repository.rowsRead, repository.rowsFromStream)
            try await writer.query("UPDATE many SET n = $1 WHERE id = 1", [round])
            #expect(try await eventually { all.value[id: 1]?.n == Int64(round) })
            #expect(repository.rowsRead == read && repository.rowsFromStream == taken + 1, "round \(round)")
        }
    }

    @Test("domain columns are taken from the stream as their base types, as reads give them (publish refuses a domain key)")
    func domains() async throws {
        let repository = LiveRepository(database, changes: .logicalReplication)
        defer { repository.close() }
        let row = try await repository.read(Ledger.self, id: 7)
        let (read, taken) = try await update("ledger", 4, repository) { row.value == Ledger(id: 7, code: "a", n: Int64($0)) }
        #expect(read == 0 && taken == 3, "\(read) rows read, \(taken) taken")
    }

    @Test("under row-level security, which the stream does not apply, rows are read, not taken; under a live query of the table, neither the query nor the handle reads one")
    func readNotTaken() async throws {
        let repository = LiveRepository(database, changes: .logicalReplication)
        defer { repository.close() }
        let secret = try await repository.read(Secret.self, id: 1)
        let (read, taken) = try await update("secrets", 3, repository) { secret.value.n == Int64($0) }
        #expect(read >= 2 && taken == 0, "\(read) rows read, \(taken) taken")
        let ledger = try await repository.read(Ledger.self, id: 7)
        var everyone: Var<IdentifiedArrayOf<Ledger>>? = try await repository.readAll(Ledger.self)
        let (readUnderQuery, takenUnderQuery) = try await update("ledger", 3, repository) { ledger.value.n == Int64($0) && everyone?.value.first?.n == Int64($0) }
        #expect(readUnderQuery == 0 && takenUnderQuery == 2, "\(readUnderQuery) rows read, \(takenUnderQuery) taken under the query")
        everyone = nil
        let (readAfter, takenAfter) = try await update("ledger", 3, repository) { ledger.value.n == Int64($0) }
        #expect(readAfter == 0 && takenAfter == 2, "\(readAfter) rows read, \(takenAfter) taken once the query is let go")
    }

    @Test("row-level security enabled while running: from then on the table's rows are read")
    func rowSecurityEnabledWhileRunning() async throws {
        let repository = LiveRepository(database, changes: .logicalReplication)
        defer { repository.close() }
        let ledger = try await repository.read(Ledger.self, id: 7)
        let (_, taken) = try await update("ledger", 3, repository) { ledger.value.n == Int64($0) }
        #expect(taken == 2)
        try await database.query("ALTER TABLE ledger ENABLE ROW LEVEL SECURITY")
        let (read, takenAfter) = try await update("ledger", 3, repository) { ledger.value.n == Int64($0) }
        #expect(takenAfter == 0 && read >= 2, "\(read) rows read, \(takenAfter) taken")
    }

    @Test("another connection's updates arrive as rows: after the first, none is read — and each shows what a read shows, for every column type")
    func updatesArriveAsRows() async throws {
        let repository = LiveRepository(database, changes: .logicalReplication)
        defer { repository.close() }
        let row = try await repository.read(EveryType.self, id: 1)
        let writer = Database(configuration, maximumConnections: 1)
        defer { writer.close() }
        let updates = [
            "mood = 'excited', price = '-0.07', note = '{\"title\": \"m\", \"written\": \"2024-02-29T13:45:06.123+00:00\"}'",
            "opens = '17:05:01.25', opens_tz = '23:59-03:30', address = '2001:db8::1/64', network = '2001:db8::/32'",
            "seats = '(10,)', spot = '(0.1,1e300)', wait = '-14 mons 30 days -0.000001 seconds', due = '-infinity'",
            "amount = '2.5', precise = '9\(LiveColumnTypesTests.precise)', counts = '{\"z\": 26, \"z\": 27}', grid = '{{7},{8},{9}}'",
            "mac = '08:00:2b:ff:ff:ff', mood_text = 'calm', starts = '2000-01-01 00:00:00.000001', ends = 'epoch'",
        ]
        var readsAfterFirst = 0
        for (index, update) in updates.enumerated() {
            let before = repository.reads.withLock { $0.rows }
            try await writer.query("UPDATE every_type SET \(update) WHERE id = 1")
            let read = try await database.query("SELECT * FROM every_type WHERE id = 1")[0].decode(EveryType.self)
            #expect(try await eventually { row.value == read }, "update \(index + 1): the handle shows \(row.value), a read \(read)")
            if index > 0 { readsAfterFirst += repository.reads.withLock { $0.rows } - before }
        }
        #expect(readsAfterFirst == 0, "\(readsAfterFirst) rows read for \(updates.count - 1) updates the stream delivered whole")
    }

    @Test("a table with a generated column, which PostgreSQL 15's stream leaves out, is read instead: the column is right")
    func generatedColumnIsRead() async throws {
        let repository = LiveRepository(database, changes: .logicalReplication)
        defer { repository.close() }
        let row = try await repository.read(Doubled.self, id: 1)
        let writer = Database(configuration, maximumConnections: 1)
        defer { writer.close() }
        for value in 2...4 {
            let before = repository.reads.withLock { $0.rows }
            try await writer.query("UPDATE doubled SET a = $1 WHERE id = 1", [value])
            #expect(try await eventually { row.value == Doubled(id: 1, a: Int64(value), b: Int64(value) * 2) }, "\(row.value)")
            #expect(repository.reads.withLock { $0.rows } - before == 1, "read, not taken from the stream")
        }
    }
}
