import Foundation
@testable import Repository
import Testing

/// A write that meets another writer's commit is merged exactly: our edited columns over
/// their row, every other bit as the database holds it — NaN, ±Infinity, microseconds, 38
/// digits, `Int64.max` — and `save()` returns only when our edit is in the row.
@Suite("Live records: exact merges")
struct ExactMergeTests {
    struct Ledger: Record, Equatable {
        static let tableName = "ledgers"
        var id: Int64
        var name: String
        var other: String
        var ratio: Double
        var stamp: Date
        var amount: Decimal
        var big: Int64
    }

    let database: Database
    let repository: LiveRepository

    init() async throws {
        database = try await makeContactsDatabase()
        try await database.withConnection { connection in
            try await connection.execute(script: """
                CREATE TABLE ledgers (id bigint PRIMARY KEY, name text NOT NULL, other text NOT NULL, ratio double precision NOT NULL,
                                      stamp timestamptz NOT NULL, amount numeric(38,18) NOT NULL, big bigint NOT NULL);
                SELECT live.enable_change_notifications('ledgers');
                """)
        }
        repository = LiveRepository(database)
    }

    /// The row as PostgreSQL prints it.
    func text(_ id: Int64) async throws -> [String] {
        let row = try await database.query("SELECT name, other, ratio::text, stamp::text, amount::text, big::text FROM ledgers WHERE id = $1", [id])[0]
        return try (0..<6).map { try row.decode(String.self, at: $0) }
    }

    @Test("our column over their commit, while our UPDATE waits for their lock: exact, and observers never see our edit undone",
          arguments: ["NaN", "Infinity", "-Infinity", "0.1"])
    func lockWaitMerge(ratio: String) async throws {
        try await database.query("""
            INSERT INTO ledgers VALUES (1, 'original', 'original', $1::float8, '2024-02-29 13:45:06.123457+00',
                                        12345678901234567890.123456789012345678, 9223372036854775807)
            """, [ratio])
        let before = try await text(1)
        let ledger = try await repository.read(Ledger.self, id: 1)
        let exact = ledger.value
        let shown = Recorder<Update<Ledger>>()
        let subscription = ledger.observe { shown.append($0) }
        try await commitUnderneath(database, "UPDATE ledgers SET other = 'theirs' WHERE id = 1") {
            ledger[\.name].value = "ours"
        }
        try await ledger.save()
        #expect(try await text(1) == ["ours", "theirs"] + before[2...])
        #expect(try await eventually { ledger.value.other == "theirs" })
        for update in shown.all {
            for value in [update.old, update.new] {
                #expect(value.ratio.bitPattern == exact.ratio.bitPattern || (value.ratio.isNaN && exact.ratio.isNaN))
                #expect(value.stamp == exact.stamp && value.amount == exact.amount && value.big == .max)
            }
            #expect(!(update.old.name == "ours" && update.new.name == "original"), "observers saw our edit undone")
            #expect(RecordContent<Ledger>.differs(update.old, update.new), "an update with old == new: \(update)")
        }
        #expect(shown.all.map(\.new.name) == ["ours", "ours"] && shown.all.last?.new.other == "theirs")
        subscription.cancel()
    }

    @Test("a date set to the nanosecond and saved: the database's microseconds come back, and no update says old == new")
    func noSameValueUpdate() async throws {
        try await database.query("INSERT INTO ledgers VALUES (2, 'a', 'b', 1, now(), 1, 1)")
        let ledger = try await repository.read(Ledger.self, id: 2)
        let shown = Recorder<Update<Ledger>>()
        let subscription = ledger.observe { shown.append($0) }
        ledger[\.stamp].value = Date(timeIntervalSinceReferenceDate: 785_000_000.123_456_789)
        try await ledger.save()
        try await database.query("UPDATE ledgers SET other = 'c' WHERE id = 2")   // an echo, then a real change
        #expect(try await eventually { ledger.value.other == "c" })
        #expect(shown.count == 2)
        #expect(shown.all.allSatisfy { RecordContent<Ledger>.differs($0.old, $0.new) })
        #expect(try await text(2)[3].hasSuffix(".123457+00"))
        subscription.cancel()
    }
}
