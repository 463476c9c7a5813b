import Foundation
import PropertyBased
@testable import Repository
import Testing

/// Several writers — each its own repository and connections — edit disjoint columns of one
/// row of many types at once, so their writes keep finding the row moved on and merge. An
/// audit trigger records every committed version. Counted: edits a `save()` confirmed that the
/// row does not hold at the end, and committed versions in which a writer's step counter went
/// back (a stale value of its own columns written over a newer one).
@Suite("Live records: concurrent writers, merged exactly")
struct ConcurrentMergeTests {
    struct Wide: Record, Equatable {
        static let tableName = "wide"
        var id: Int64
        var f8: Double
        var f4: Float
        var ts: Date
        var num: Decimal
        var i8: Int64
        var txt: String
        var raw: Data
        var flag: Bool
        var uid: UUID
        var step0: Int64
        var step1: Int64
        var step2: Int64
    }

    /// The columns each writer owns, and its step counter.
    static let owned = [["f8", "ts", "txt"], ["f4", "num", "raw"], ["i8", "flag", "uid"]]
    static let steps: [any WritableKeyPath<Wide, Int64> & Sendable] = [\.step0, \.step1, \.step2]

    static func set(_ column: String, of row: inout Wide, from word: UInt64) {
        let specials: [Double] = [.nan, .infinity, -.infinity, -0.0, .leastNonzeroMagnitude, .greatestFiniteMagnitude, .pi]
        switch column {
        case "f8": row.f8 = word % 3 == 0 ? specials[Int(word / 3 % 7)] : Double(Int64(bitPattern: word)) / 1e9
        case "f4": row.f4 = word % 3 == 0 ? Float(specials[Int(word / 3 % 7)]) : Float(Int32(truncatingIfNeeded: word)) / 1e3
        case "ts": row.ts = Date(timeIntervalSince1970: Double(Int64(bitPattern: word) % 200_000_000_000_000) / 1e6)
        case "num": row.num = Decimal(string: "\(word % 10_000_000_000_000_000_000).\(word % 999_999_999_999_999_999)")!
        case "i8": row.i8 = word % 5 == 0 ? .min : Int64(bitPattern: word)
        case "txt": row.txt = "✓ \(word) 'q' \"d\" \\ \u{1F600}"
        case "raw": row.raw = Data((0..<Int(word % 17)).map { UInt8(truncatingIfNeeded: word >> ($0 % 8 * 8) &+ UInt64($0)) })
        case "flag": row.flag = word % 2 == 0
        default: row.uid = UUID(uuid: (UInt8(truncatingIfNeeded: word), 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, UInt8(truncatingIfNeeded: word >> 8)))
        }
    }

    /// A column's value as the database would hold it, for comparing.
    static func cell(_ row: Wide, _ column: String) throws -> SQLValue {
        try RecordColumns(row).values.first { $0.column == column }!.value
    }

    @Test("three writers, random values of nine types, disjoint columns: no confirmed edit lost, no stale version",
          .timeLimit(.minutes(15)))  // a hang, not a slow run: under the whole suite on 2 cores it takes 3–5 minutes
    func randomWriters() async throws {
        let database = try await makeContactsDatabase()
        try await database.withConnection { connection in
            try await connection.execute(script: """
                CREATE TABLE wide (id bigint PRIMARY KEY, f8 float8 NOT NULL, f4 real NOT NULL, ts timestamptz NOT NULL,
                    num numeric(38,18) NOT NULL, i8 bigint NOT NULL, txt text NOT NULL, raw bytea NOT NULL, flag bool NOT NULL,
                    uid uuid NOT NULL, step0 bigint NOT NULL, step1 bigint NOT NULL, step2 bigint NOT NULL);
                SELECT live.enable_change_notifications('wide');
                CREATE TABLE wide_audit (seq bigserial PRIMARY KEY, id bigint, step0 bigint, step1 bigint, step2 bigint);
                CREATE FUNCTION wide_audit() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN INSERT INTO wide_audit (id, step0, step1, step2) VALUES (NEW.id, NEW.step0, NEW.step1, NEW.step2); RETURN NEW; END $$;
                CREATE TRIGGER wide_audit AFTER INSERT OR UPDATE ON wide FOR EACH ROW EXECUTE FUNCTION wide_audit();
                """)
        }
        let writers = (0..<3).map { _ in LiveRepository(Database(database.configuration, maximumConnections: 2)) }
        var lost = 0, stale = 0, rows = 0, rounds = 0
        await propertyCheck(count: 12, input: Gen.uint64().array(of: 30...60)) { words in
            rows += 1
            let id = Int64(rows)
            try await database.query("""
                INSERT INTO wide VALUES ($1, 'NaN', '-Infinity', '2024-02-29 13:45:06.123457+00', 12345678901234567890.123456789012345678,
                                         9223372036854775807, 'original', '\\x00ff', true, gen_random_uuid(), 0, 0, 0)
                """, [id])
            // Each writer's own columns as it last set them: what its final save() confirms.
            let confirmed = try await withThrowingTaskGroup(of: (Int, Wide).self) { group in
                for (index, repository) in writers.enumerated() {
                    group.addTask {
                        let handle = try await repository.read(Wide.self, id: id)
                        var mine = handle.value
                        for (step, word) in words.enumerated() where Int(word % 3) == index {
                            handle.update { row in
                                for (position, column) in Self.owned[index].enumerated() where (word >> 8) % 2 == 0 || position == Int((word >> 16) % 3) {
                                    Self.set(column, of: &row, from: word &* UInt64(step + 1))
                                }
                                row[keyPath: Self.steps[index]] = Int64(step + 1)
                                mine = row
                            }
                            if word % 4 == 0 { try await handle.save() }
                            await Task.yield()
                        }
                        try await handle.save()
                        return (index, mine)
                    }
                }
                return try await group.reduce(into: [Int: Wide]()) { $0[$1.0] = $1.1 }
            }
            rounds += 1
            let stored = try await database.query("SELECT * FROM wide WHERE id = $1", [id]).decode(Wide.self)[0]
            for (index, columns) in Self.owned.enumerated() {
                for column in columns + ["step\(index)"] where try Self.cell(stored, column) != Self.cell(confirmed[index]!, column) {
                    lost += 1
                }
            }
            let audit = try await database.query("SELECT step0, step1, step2 FROM wide_audit WHERE id = $1 ORDER BY seq", [id])
            var highest = [Int64](repeating: 0, count: 3)
            for row in audit {
                for index in 0..<3 {
                    let step = try row.decode(Int64.self, at: index)
                    if step < highest[index] { stale += 1 }
                    highest[index] = max(highest[index], step)
                }
            }
        }
        print("concurrent merges: \(rows) rows × 3 writers, \(rounds) rounds: \(lost) confirmed edits lost, \(stale) stale versions")
        #expect(lost == 0 && stale == 0)
        for writer in writers { writer.close() }
    }
}
