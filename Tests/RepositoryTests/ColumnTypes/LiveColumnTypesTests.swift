import Foundation
@testable import Repository
import Testing

/// Issue 34's table, row by row, on a table of one column per type mapped to a `Record` with
/// the natural Swift type of each: a one-shot read, a live handle edited and saved, and SQL
/// checking what the database holds.
@Suite("Column types through live handles")
struct LiveColumnTypesTests {
    enum Mood: String, Codable, Sendable { case calm, excited }

    struct Note: Codable, Equatable, Sendable {
        var title: String
        var written: Date
    }

    struct EveryType: Record, Equatable {
        static let tableName = "every_type"
        var id: Int64
        var mood: Mood
        var moodText: String
        var opens: PostgresTime
        var opensTz: PostgresTimeTZ
        var address: PostgresInet
        var network: PostgresInet
        var price: Decimal
        var seats: PostgresRange<Int32>
        var spot: PostgresPoint
        var spotText: String
        var wait: PostgresInterval
        var due: Date
        var starts: Date
        var ends: Date
        var amount: Decimal
        var precise: String
        var counts: [String: Int]
        var note: Note
        var grid: [[Int]]
        var mac: String

        static func == (a: EveryType, b: EveryType) -> Bool {
            // Decimal's NaN is not equal to itself; compare as the database holds the row.
            (try? RecordColumns(a).changedProperties(since: RecordColumns(b)).isEmpty) ?? false
        }
    }

    static func micros(_ value: Int64) -> Date { Date(timeIntervalSince1970: Double(value) / 1_000_000) }
    static let precise = "1234567890123456789012345.6789012345678901234567891"   // 50 significant digits

    static let first = EveryType(
        id: 1, mood: .calm, moodText: "excited", opens: PostgresTime(hour: 9, minute: 30),
        opensTz: PostgresTimeTZ(time: PostgresTime(hour: 9), utcOffset: 19_800), address: PostgresInet("192.168.0.1/24")!,
        network: PostgresInet("10.1.0.0/16")!, price: Decimal(string: "1234.56")!, seats: PostgresRange(1..<5),
        spot: PostgresPoint(x: 1.5, y: -2), spotText: "(0,0)", wait: PostgresInterval(months: 1, days: 2, microseconds: 3),
        due: .distantFuture, starts: .distantPast, ends: .distantFuture, amount: .nan, precise: precise,
        counts: ["a": 2, "b": 3], note: Note(title: "n", written: micros(1_709_214_306_123_457)),
        grid: [[1, 2, 3], [4, 5, 6]], mac: "08:00:2b:01:02:03")

    /// The table, and row 1 as ``first``.
    static let schema = """
                CREATE TYPE mood AS ENUM ('calm', 'excited');
                CREATE TABLE every_type (
                    id bigint PRIMARY KEY, mood mood NOT NULL, mood_text mood NOT NULL, opens time NOT NULL,
                    opens_tz timetz NOT NULL, address inet NOT NULL, network cidr NOT NULL, price money NOT NULL,
                    seats int4range NOT NULL, spot point NOT NULL, spot_text point NOT NULL, wait interval NOT NULL,
                    due date NOT NULL, starts timestamp NOT NULL, ends timestamptz NOT NULL, amount numeric NOT NULL,
                    precise numeric NOT NULL, counts json NOT NULL, note jsonb NOT NULL, grid integer[] NOT NULL,
                    mac macaddr NOT NULL);
                INSERT INTO every_type VALUES (1, 'calm', 'excited', '09:30', '09:00+05:30', '192.168.0.1/24', '10.1.0.0/16',
                    '1234.56', '[1,5)', '(1.5,-2)', '(0,0)', '1 mon 2 days 0.000003 seconds', 'infinity', '-infinity', 'infinity',
                    'NaN', '\(Self.precise)', '{"a": 1, "b": 3, "a": 2}',
                    '{"title": "n", "written": "2024-02-29T13:45:06.123457+00:00"}', '{{1,2,3},{4,5,6}}', '08:00:2b:01:02:03');
        """

    let database: Database
    let repository: LiveRepository

    init() async throws {
        database = try await TestServer.makeDatabase()
        try await database.withConnection { connection in
            try await connection.execute(script: Self.schema)
        }
        try await LiveSchema.enable("every_type", on: database)
        repository = LiveRepository(database)
    }

    /// Whether every condition holds of row 1, by SQL.
    func holds(_ conditions: [String]) async throws -> [String] {
        let row = try await database.query("SELECT \(conditions.joined(separator: ", ")) FROM every_type WHERE id = 1")[0]
        return try conditions.indices.filter { try !row.decode(Bool.self, at: $0) }.map { conditions[$0] }
    }

    @Test("one-shot read and live handle: enums, time, timetz, inet, cidr, money, int4range, point, interval, ±infinity, NaN, 50 digits as String, json's last key, a jsonb Date's microseconds, a 2-D array")
    func everyRowReadsAndSaves() async throws {
        let oneShot = try await database.query("SELECT * FROM every_type WHERE id = 1")[0].decode(EveryType.self)
        #expect(oneShot == Self.first)
        #expect(oneShot.amount.isNaN && oneShot.due == .distantFuture && oneShot.starts == .distantPast)
        #expect(oneShot.note.written == Self.micros(1_709_214_306_123_457))
        let row = try await repository.read(EveryType.self, id: 1)
        #expect(row.value == Self.first)

        row.value.mood = .excited
        row.value.moodText = "calm"
        row.value.opens = PostgresTime(hour: 17, minute: 5, second: 1, microsecond: 250_000)
        row.value.opensTz = PostgresTimeTZ(time: PostgresTime(hour: 23, minute: 59), utcOffset: -12_600)
        row.value.address = PostgresInet("2001:db8::1/64")!
        row.value.network = PostgresInet("2001:db8::/32")!
        row.value.price = Decimal(string: "-0.07")!
        row.value.seats = PostgresRange(lower: .exclusive(10), upper: .unbounded)
        row.value.spot = PostgresPoint(x: 0.1, y: 1e300)
        row.value.spotText = "(3,4)"
        row.value.wait = PostgresInterval(months: -14, days: 30, microseconds: -1)
        row.value.due = .distantPast
        row.value.starts = .distantFuture
        row.value.ends = .distantPast
        row.value.amount = Decimal(string: "2.5")!
        row.value.precise = "9" + Self.precise
        row.value.counts = ["z": 26]
        row.value.note = Note(title: "m", written: Self.micros(1_709_214_306_123_000))
        row.value.grid = [[7], [8], [9]]
        row.value.mac = "08:00:2b:ff:ff:ff"
        try await row.save()
        #expect(try await holds([
            "mood = 'excited'", "mood_text = 'calm'", "opens = '17:05:01.25'", "opens_tz::text = '23:59:00-03:30'",
            "address = '2001:db8::1/64'", "network = '2001:db8::/32'", "price = '-0.07'", "seats = '(10,)'",
            "spot ~= point(0.1, 1e300)", "spot_text ~= '(3,4)'", "wait::text = '-1 years -2 mons +30 days -00:00:00.000001'",
            "due = '-infinity'", "starts = 'infinity'", "ends = '-infinity'", "amount = 2.5", "precise = '9\(Self.precise)'",
            "counts::jsonb = '{\"z\": 26}'", "(note->>'written')::timestamptz = '2024-02-29 13:45:06.123+00'",
            "grid = '{{7},{8},{9}}'", "mac = '08:00:2b:ff:ff:ff'",
        ]) == [])
        let reread = try await database.query("SELECT * FROM every_type WHERE id = 1")[0].decode(EveryType.self)
        #expect(reread == row.value)

        // NaN written from Swift: save() returns and the database holds NaN, as the handle does.
        row.value.amount = .nan
        try await row.save()
        #expect(try await holds(["amount = 'NaN'"]) == [])
        #expect(row.value.amount.isNaN)
    }

    @Test("an enum label Swift lacks names the label and both types; any column still reads as String")
    func unknownLabel() async throws {
        try await database.query("ALTER TYPE mood ADD VALUE 'sad'")
        try await database.query("UPDATE every_type SET mood = 'sad' WHERE id = 1")
        let result = try await database.query("SELECT * FROM every_type WHERE id = 1")
        let error = #expect(throws: ColumnDecodingError.self) { try result[0].decode(EveryType.self) }
        #expect(error?.description == #"column "mood": invalid PostgreSQL mood value for Swift Mood: "sad" is not a raw value of Mood"#)
        #expect(try result[0].decode(String.self, column: "mood") == "sad")
        let live = await #expect(throws: ColumnDecodingError.self) { try await repository.read(EveryType.self, id: 1) }
        #expect(live?.column == "mood")
        // A live read names what it was reading.
        #expect(live?.description == #"EveryType in every_type: column "mood": invalid PostgreSQL mood value for Swift Mood: "sad" is not a raw value of Mood"#)
    }

    @Test("a live row updated to an enum label Swift lacks: the failure is reported once, naming the label, the other row of the statement is applied, read returns the held value, and the handle follows once the row is fixed")
    func unknownLabelOnLiveRow() async throws {
        try await database.withConnection { connection in
            try await connection.execute(script: "CREATE TEMP TABLE copy AS SELECT * FROM every_type WHERE id = 1; UPDATE copy SET id = 2; INSERT INTO every_type SELECT * FROM copy")
        }
        let row = try await repository.read(EveryType.self, id: 1)
        let other = try await repository.read(EveryType.self, id: 2)
        let errors = ErrorLog(repository)
        try await database.query("ALTER TYPE mood ADD VALUE 'sad'")
        // One statement: row 1 no longer decodes, row 2 does, and is applied.
        try await database.query("UPDATE every_type SET mood = CASE id WHEN 1 THEN 'sad'::mood ELSE mood END, amount = 5 WHERE id IN (1, 2)")
        #expect(try await eventually { !errors.errors.all.isEmpty && other.value.amount == 5 })
        #expect(row.value.mood == .calm && row.value.amount.isNaN, "the row that does not decode keeps its value")
        let again = try await repository.read(EveryType.self, id: 1)
        #expect(again.value.mood == .calm && again.value.amount.isNaN, "read returns the shared live value")
        try await database.query("UPDATE every_type SET mood = 'calm', amount = 7 WHERE id = 1")
        #expect(try await eventually { row.value.amount == 7 })
        let reported = errors.errors.all
        #expect(reported.count == 1 && reported[0].contains(#""sad" is not a raw value of Mood"#), "\(reported)")
        #expect(reported.first?.contains(#"row "1": column "mood""#) == true, "which row: \(reported)")
    }

    @Test("a type in an error is named as the catalog names it, looked up once per pool")
    func typeNames() async throws {
        try await database.withConnection { connection in
            try await connection.execute(script: "CREATE SCHEMA extra; CREATE TYPE extra.shade AS ENUM ('dark')")
        }
        let before = database.types.lookups.withLock { $0 }
        for _ in 0..<3 {
            let row = try await database.query("""
                SELECT address, network, opens, price, seats, spot, 'dark'::extra.shade AS shade FROM every_type WHERE id = 1
                """)[0]
            for (column, name) in [("address", "inet"), ("network", "cidr"), ("opens", "time"), ("price", "money"),
                                   ("seats", "int4range"), ("spot", "point"), ("shade", "extra.shade")] {
                let error = #expect(throws: ColumnDecodingError.self) { try row.decode(UUID.self, column: column) }
                #expect(error?.description == "column \"\(column)\": cannot decode PostgreSQL \(name) as Swift UUID")
            }
        }
        #expect(database.types.lookups.withLock { $0 } - before == 1)
    }

    @Test("a numeric with more digits than a Decimal holds is an error naming the column, never rounded")
    func fiftyDigits() async throws {
        struct Precise: Record {
            static let tableName = "every_type"
            var id: Int64
            var precise: Decimal
        }
        let row = try await database.query("SELECT id, precise FROM every_type WHERE id = 1")[0]
        let error = #expect(throws: ColumnDecodingError.self) { try row.decode(Precise.self) }
        #expect(error?.column == "precise")
        #expect(error?.description.contains("50 significant digits, more than a Decimal holds exactly") == true)
        let live = await #expect(throws: ColumnDecodingError.self) { try await repository.read(Precise.self, id: 1) }
        #expect(live?.column == "precise")
        #expect(try row.decode(String.self, column: "precise") == Self.precise)
    }

    @Test("a ragged 2-D array is refused before anything is sent; the row keeps its value")
    func raggedArray() async throws {
        let row = try await repository.read(EveryType.self, id: 1)
        row.value.grid = [[1, 2], [3]]
        let error = await #expect(throws: LiveRecordError.self) { try await row.save() }
        #expect("\(error.map { "\($0)" } ?? "")".contains("PostgreSQL's arrays are rectangular"))
        #expect(try await holds(["grid = '{{1,2,3},{4,5,6}}'"]) == [])
        #expect(row.value.grid == [[1, 2, 3], [4, 5, 6]])
    }
}
