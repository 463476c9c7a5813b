import Foundation
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
                """)
        }
        try await LiveSchema.publish("every_type", on: database)
        try await LiveSchema.publish("doubled", on: database)
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
