import Foundation
@testable import Repository
import Testing

/// A `Date` is a `Double` of seconds since 2001: to the microsecond within 2^32 seconds (about
/// 136 years) of it, coarser further away. A timestamp it cannot hold exactly is an error naming the column,
/// never a rounded value (found by a stranger's run: `9999-12-31 23:59:59.999999` read as
/// year 10000, `1000-06-01 00:00:00.000003` as `.000004`).
@Suite("Timestamps a Date holds exactly, or an error")
struct TimestampExactnessTests {
    /// A binary `timestamptz` cell holding `micros` after 2000-01-01.
    static func cell(_ micros: Int64) -> Cell {
        Cell(column: "at", type: .timestamptz, bytes: ArraySlice(withUnsafeBytes(of: micros.bigEndian) { Array($0) }))
    }

    /// Microseconds after 2000-01-01 of a UTC time.
    static func micros(_ year: Int64, _ month: Int64, _ day: Int64, seconds: Int64 = 0, fraction: Int64 = 0) -> Int64 {
        (TimestampFormat.days(year: year, month: month, day: day) * 86_400 + seconds) * 1_000_000 + fraction - TimestampFormat.postgresEpochMicroseconds
    }

    @Test("values a Date cannot hold to the microsecond are refused in one line naming the column")
    func refused() {
        for micros in [Self.micros(9999, 12, 31, seconds: 86_399, fraction: 999_999), Self.micros(1000, 6, 1, fraction: 3),
                       Self.micros(5000, 1, 1, fraction: 1), Self.micros(1, 1, 1, fraction: 1)] {
            let result = Result { try Self.cell(micros).decodeDate() }
            let message = result.failure.map { "\($0)" } ?? ""
            #expect(message.contains("column \"at\"") && message.contains("read it as String") && !message.contains("\n"), "\(micros): \(result)")
        }
    }

    @Test("whole seconds in any year, and every microsecond from 1866 to 2136 (within 2^32 seconds of 2001), read exactly")
    func exact() throws {
        for micros in [Self.micros(1, 1, 1), Self.micros(9999, 12, 31, seconds: 86_399), Self.micros(2024, 2, 29, seconds: 49_506, fraction: 123_457),
                       Self.micros(100_000, 1, 1, seconds: 1), Self.micros(250_000, 6, 30, seconds: 86_399)] {
            #expect(try TimestampFormat.unixMicroseconds(Self.cell(micros).decodeDate()) == micros + TimestampFormat.postgresEpochMicroseconds)
        }
        var generator = SystemRandomNumberGenerator()
        let span = Self.micros(2136, 1, 1) - Self.micros(1866, 1, 1)
        for _ in 0..<100_000 {
            let micros = Self.micros(1866, 1, 1) + Int64.random(in: 0..<span, using: &generator)
            #expect(try TimestampFormat.unixMicroseconds(Self.cell(micros).decodeDate()) == micros + TimestampFormat.postgresEpochMicroseconds)
        }
    }

    @Test("a Date this process made is written and read back as itself, whatever its year")
    func ownDatesRoundTrip() throws {
        for seconds in [-62_135_596_800.000_001, 253_402_300_799.999_999, 1e11 + 0.123_456, 1_709_214_306.123_457, 3_093_527_980_801] {
            let date = Date(timeIntervalSince1970: seconds)
            let micros = try #require(TimestampFormat.unixMicroseconds(date))
            #expect(try Self.cell(micros - TimestampFormat.postgresEpochMicroseconds).decodeDate() == date)
        }
        // A whole second past year 20,000 is written as that second, not 64 µs before it.
        #expect(TimestampFormat.string(from: Date(timeIntervalSince1970: 3_093_527_980_801)) == "100000-01-01 00:00:01.000000+00")
    }

    @Test("PostgreSQL's last and first timestamps and dates read without a trap: an error or an exact Date, and exact text as String")
    func extremes() async throws {
        let database = try await TestServer.makeDatabase()
        let row = try await database.query("""
            SELECT '294276-12-31 23:59:59.999999'::timestamp AS last_ts, '294276-12-31 23:59:59'::timestamptz AS last_tstz,
                   '4714-11-24 00:00:00 BC'::timestamp AS first_ts, '5874897-12-31'::date AS last_date, '4714-11-24 BC'::date AS first_date,
                   '294276-01-01'::date AS far_date
            """)[0]
        // Past what an Int64 of microseconds since 1970 holds: an error naming the column.
        for column in ["last_ts", "last_tstz"] {
            let message = Result { try row.decode(Date.self, column: column) }.failure.map { "\($0)" } ?? ""
            #expect(message.contains("\"\(column)\"") && !message.contains("\n"), "\(column): \(message)")
        }
        #expect(try row.decode(String.self, column: "last_ts") == "294276-12-31 23:59:59.999999")
        #expect(try row.decode(String.self, column: "last_tstz") == "294276-12-31 23:59:59+00")
        #expect(try row.decode(String.self, column: "first_ts") == "4714-11-24 00:00:00 BC")
        // Whole days: exact throughout.
        #expect(try row.decode(Date.self, column: "last_date") == Date(timeIntervalSince1970: Double(TimestampFormat.days(year: 5_874_897, month: 12, day: 31)) * 86_400))
        #expect(try row.decode(Date.self, column: "first_date") == Date(timeIntervalSince1970: Double(TimestampFormat.days(year: -4713, month: 11, day: 24)) * 86_400))
        #expect(try row.decode(Date.self, column: "far_date") == Date(timeIntervalSince1970: Double(TimestampFormat.days(year: 294_276, month: 1, day: 1)) * 86_400))
        #expect(TimestampFormat.date(parsing: "999999999999999999-01-01") == nil)
    }

    @Test("4001-01-01 and 1 BC's December 30th, the very Dates that stand for ±infinity, are refused in one line, never read as infinity (a stranger's run wrote them back as infinity)")
    func infinityInstants() async throws {
        let database = try await TestServer.makeDatabase()
        let row = try await database.query("""
            SELECT '4001-01-01'::date AS d_future, '0001-12-30 BC'::date AS d_past, '4001-01-01 00:00:00'::timestamp AS ts_future,
                   '4001-01-01 00:00:00+00'::timestamptz AS tstz_future, '0001-12-30 00:00:00+00 BC'::timestamptz AS tstz_past,
                   daterange('2020-01-01', '4001-01-01') AS range_future,
                   '4000-12-31'::date AS d_before, '4001-01-01 00:00:01+00'::timestamptz AS tstz_after, 'infinity'::date AS d_infinity
            """)[0]
        for column in ["d_future", "d_past", "ts_future", "tstz_future", "tstz_past"] {
            let message = Result { try row.decode(Date.self, column: column) }.failure.map { "\($0)" } ?? ""
            #expect(message.contains("\"\(column)\"") && message.contains("infinity") && message.contains("read it as String") && !message.contains("\n"),
                    "\(column): \(message)")
            #expect(try row.decode(String.self, column: column).contains("4001") || row.decode(String.self, column: column).contains("BC"))
        }
        #expect(throws: (any Error).self) { try row.decode(PostgresRange<Date>.self, column: "range_future") }
        #expect(try row.decode(Date.self, column: "d_before") == Date.distantFuture.addingTimeInterval(-86_400))
        #expect(try row.decode(Date.self, column: "tstz_after") == Date.distantFuture.addingTimeInterval(1))
        #expect(try row.decode(Date.self, column: "d_infinity") == .distantFuture)
    }

    @Test("a Date that is not a number is refused by the server naming NaN, and nothing is written (it was sent as 4714 BC)")
    func notANumber() async throws {
        let database = try await TestServer.makeDatabase()
        try await database.withConnection { try await $0.execute(script: "CREATE TABLE nan_stamps (id bigint PRIMARY KEY, at timestamptz NOT NULL, on_day date); INSERT INTO nan_stamps VALUES (1, '2020-01-01', '2020-01-01')") }
        let nan = Date(timeIntervalSinceReferenceDate: .nan)
        #expect(TimestampFormat.string(from: nan) == "NaN")
        for column in ["at", "on_day"] {
            let message = await Result(catching: { try await database.query("UPDATE nan_stamps SET \(column) = $1 WHERE id = 1", [nan]) }).failure.map { "\($0)" } ?? ""
            #expect(message.contains("\"NaN\"") && !message.contains("4714") && !message.contains("\n"), "\(column): \(message)")
        }
        #expect(try await database.query("SELECT at = '2020-01-01' AND on_day = '2020-01-01' FROM nan_stamps")[0].decode(Bool.self, at: 0))
    }

    struct Stamp: Record, Equatable {
        static let tableName = "stamps"
        var id: Int64
        var at: Date
        var note: String
    }

    @Test("a Date finer than a microsecond, saved through a live handle: the handle then holds what the row holds, as every other process reads it")
    func finerThanTheColumn() async throws {
        let database = try await TestServer.makeDatabase()
        try await database.withConnection { try await $0.execute(script: "CREATE TABLE stamps (id bigint PRIMARY KEY, at timestamptz NOT NULL, note text NOT NULL); INSERT INTO stamps VALUES (1, '2020-01-01', 'a')") }
        try await LiveSchema.enable("stamps", on: database)
        let writer = LiveRepository(database), other = LiveRepository(Database(database.configuration, maximumConnections: 2))
        let mine = try await writer.read(Stamp.self, id: 1)
        let theirs = try await other.read(Stamp.self, id: 1)
        for seconds in [817_609_467.953_605_5, 0.000_001_5, -1.000_000_7] {
            mine[\.at].value = Date(timeIntervalSinceReferenceDate: seconds)
            try await mine.save()
            let stored = try await database.query("SELECT at FROM stamps WHERE id = 1")[0].decode(Date.self, at: 0)
            #expect(stored != Date(timeIntervalSinceReferenceDate: seconds), "the column keeps microseconds")
            #expect(mine.value.at == stored, "\(seconds): the writer's handle holds the row's value")
            #expect(try await eventually { theirs.value.at == stored })
            #expect(mine.value == theirs.value)
        }
    }
}
