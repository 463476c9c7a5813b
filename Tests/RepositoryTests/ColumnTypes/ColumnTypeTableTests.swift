import Foundation
import Repository
import Testing

/// README's type table, row by row: each row's samples read one-shot into their Swift types,
/// written from them and from their text, checked with SQL. A row of the table without samples
/// here, or samples for a row the table lacks, fails the walk.
@Suite("Column types: the README's table")
struct ColumnTypeTableTests {
    enum Mood: String, Codable, Sendable { case calm, excited }
    struct Note: Codable, Equatable, Sendable { var title: String; var written: Date }

    static func decimal(_ text: String) -> Decimal { Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))! }
    static func date(_ seconds: String) -> Date { Date(timeIntervalSince1970: Double(seconds)!) }

    /// The samples of each row, by the row's first cell as README spells it.
    static let rows: [String: [ColumnTypeSample]] = [
        "`boolean`": [.init("boolean", "true", true), .init("boolean", "false", false)],
        "`smallint`, `integer`, `bigint`": [
            .init("smallint", "-32768", Int16.min), .init("integer", "2147483647", Int32.max),
            .init("bigint", "9223372036854775807", Int64.max), .init("bigint", "-5", -5),
            // A whole Double or Decimal, read and written (a Double once went as `3.0`, which no integer column takes).
            .init("integer", "3", 3.0 as Double), .init("bigint", "9007199254740991", 9_007_199_254_740_991.0 as Double),
            .init("smallint", "-4", Decimal(-4)),
        ],
        "`real`, `double precision`": [
            .init("real", "1.5", Float(1.5)), .init("double precision", "0.30000000000000004", 0.1 + 0.2 as Double),
            .init("double precision", "-Infinity", -Double.infinity), .init("double precision", "1e+300", 1e300 as Double),
            .init("double precision", "NaN", Double.nan, same: { $0.isNaN && $1.isNaN }),
            .init("double precision", "-0", -0.0 as Double, same: { $0 == $1 && $0.sign == $1.sign }),
        ],
        "`numeric`": [
            .init("numeric", "12345678901234567890.012345678901234567", decimal("12345678901234567890.012345678901234567")),
            .init("numeric", "-0.0001", decimal("-0.0001")),
            .init("numeric", "NaN", Decimal.nan, same: { $0.isNaN && $1.isNaN }),
        ],
        "`money`": [.init("money", "-1234.56", decimal("-1234.56"), text: "-1234.56"), .init("money", "0.07", decimal("0.07"), text: "0.07")],
        "`text`, `varchar(n)`, `char(n)`, `name`, `citext`": [
            .init("text", "O'Brien 👩‍💻 \"q\"", "O'Brien 👩‍💻 \"q\""), .init("varchar(10)", "calm", Mood.calm),
            .init("char(5)", "ab", "ab   "), .init("name", "a_name", "a_name"),
        ],
        "`bytea`": [.init("bytea", "\\x00ff10", Data([0, 255, 16]))],
        "`uuid`": [.init("uuid", "0e1b6a5c-3f5d-4a43-9c3e-6f0b7d6a2b11", UUID(uuidString: "0E1B6A5C-3F5D-4A43-9C3E-6F0B7D6A2B11")!)],
        "`date`, `timestamp`, `timestamptz`": [
            .init("date", "2024-02-29", date("1709164800")), .init("date", "infinity", Date.distantFuture),
            .init("timestamp", "1969-12-31 23:59:59.999999", date("-0.000001")),
            .init("timestamptz", "2024-02-29 13:45:06.123457+00", Date(timeIntervalSince1970: Double(1_709_214_306_123_457) / 1_000_000),
                  text: "2024-02-29 13:45:06.123457+00"),
            .init("timestamptz", "-infinity", Date.distantPast), .init("timestamp", "infinity", Date.distantFuture),
        ],
        "`time`, `timetz`": [
            .init("time", "13:45:06.5", PostgresTime(hour: 13, minute: 45, second: 6, microsecond: 500_000)),
            .init("time", "24:00:00", PostgresTime(hour: 24)),
            .init("timetz", "13:45:06.5+05:30", PostgresTimeTZ(time: PostgresTime(hour: 13, minute: 45, second: 6, microsecond: 500_000), utcOffset: 19_800)),
            .init("timetz", "09:00:00-03", PostgresTimeTZ(time: PostgresTime(hour: 9), utcOffset: -10_800)),
        ],
        "`interval`": [
            .init("interval", "1 year 2 mons -3 days +04:05:06.78", PostgresInterval(months: 14, days: -3, microseconds: 14_706_780_000)),
            .init("interval", "-00:00:00.000001", PostgresInterval(microseconds: -1)),
            .init("interval", "1 mon", PostgresInterval(months: 1)), .init("interval", "30 days", PostgresInterval(days: 30)),
            .init("interval", "0", PostgresInterval()),
            .init("interval", "-2147483648 mons -2147483648 days -9223372036854775807 microseconds",
                  PostgresInterval(months: .min, days: .min, microseconds: .min + 1)),
            .init("interval", "178956970 years 7 mons 2147483647 days 2562047788:00:54.775807",
                  PostgresInterval(months: .max, days: .max, microseconds: .max)),
        ],
        "`inet`, `cidr`": [
            .init("inet", "192.168.0.1/24", PostgresInet(address: [192, 168, 0, 1], prefixLength: 24)!),
            .init("inet", "10.1.2.3", PostgresInet("10.1.2.3")!), .init("cidr", "10.1.0.0/16", PostgresInet("10.1.0.0/16")!),
            .init("inet", "2001:db8::1", PostgresInet("2001:db8::1")!), .init("inet", "::ffff:1.2.3.4/120", PostgresInet("::ffff:1.2.3.4/120")!),
            .init("cidr", "2001:db8::/32", PostgresInet("2001:db8::/32")!),
        ],
        "`point`": [.init("point", "(1.5,-2)", PostgresPoint(x: 1.5, y: -2), holds: "v ~= $1::text::point")],
        "`int4range`, `int8range`, `numrange`, `tsrange`, `tstzrange`, `daterange`": [
            .init("int4range", "[1,5)", PostgresRange<Int32>(1..<5)), .init("int4range", "empty", PostgresRange<Int32>.empty),
            .init("int8range", "(,10)", PostgresRange<Int64>(lower: .unbounded, upper: .exclusive(10))),
            .init("numrange", "(0.5,1.25]", PostgresRange<Decimal>(lower: .exclusive(decimal("0.5")), upper: .inclusive(decimal("1.25")))),
            .init("tstzrange", "[\"2024-01-01 00:00:00+00\",infinity)", PostgresRange<Date>(lower: .inclusive(date("1704067200")), upper: .exclusive(.distantFuture))),
            .init("tsrange", "[,\"2000-01-01 00:00:00.5\"]", PostgresRange<Date>(lower: .unbounded, upper: .inclusive(date("946684800.5")))),
            .init("daterange", "[2024-01-01,2024-02-01)", PostgresRange<Date>(date("1704067200")..<date("1706745600"))),
        ],
        "enum types (`CREATE TYPE mood AS ENUM …`)": [.init("mood", "excited", Mood.excited), .init("mood", "calm", "calm")],
        "`json`, `jsonb`": [
            .init("jsonb", "{\"title\": \"t\", \"written\": \"2024-02-29T13:45:06.123457Z\"}",
                  Note(title: "t", written: Date(timeIntervalSince1970: Double(1_709_214_306_123_457) / 1_000_000)), holds: "v = $1::text::jsonb"),
            .init("json", "{\"a\": 1, \"a\": 2}", ["a": 2], holds: "v::jsonb = $1::text::jsonb"),
        ],
        "arrays, of any dimension": [
            .init("integer[]", "{{1,2,3},{4,5,6}}", [[1, 2, 3], [4, 5, 6]]), .init("text[]", "{a,NULL,\"b c\"}", ["a", nil, "b c"] as [String?]),
            .init("bigint[]", "{}", [Int64]()), .init("integer[]", "{{{1},{2}},{{3},{4}}}", [[[1], [2]], [[3], [4]]]),
            .init("mood[]", "{calm,excited}", [Mood.calm, .excited]),
        ],
        "any type, these and others (`macaddr`, `bit`, composites, multiranges…)": [
            .init("macaddr", "08:00:2b:01:02:03", "08:00:2b:01:02:03"), .init("bit(4)", "1010", "1010"),
            .init("int4multirange", "{[1,3),[5,7)}", "{[1,3),[5,7)}"), .init("pair", "(1,\"a b\")", "(1,\"a b\")", holds: "v::text = $1::text::pair::text"),
            .init("line", "{1,-1,0}", "{1,-1,0}", holds: "v ?|| $1::text::line"), .init("box[]", "{(1,1),(0,0);(2,2),(1,1)}", "{(1,1),(0,0);(2,2),(1,1)}", holds: "v::text = $1::text::box[]::text"),
            .init("pg_lsn", "16/B374D848", "16/B374D848"), .init("int4range[]", "{\"[1,2)\",empty}", "{\"[1,2)\",empty}"),
        ],
        "NULL": [.init("integer", "", Int?.none, holds: "v IS NULL")],
    ]

    let database: Database

    init() async throws {
        database = try await TestServer.makeDatabase()
        try await database.query("CREATE TYPE mood AS ENUM ('calm', 'excited')")
        try await database.query("CREATE TYPE pair AS (n integer, s text)")
    }

    @Test("a two-dimensional parameter with no element at all is sent as the empty array PostgreSQL writes, {}")
    func emptySubArrays() async throws {
        #expect(try await database.query("SELECT $1::int[] = '{}'", [[[Int](), [Int]()]])[0].decode(Bool.self, at: 0))
    }

    @Test("a two-dimensional text[] read as [String] is refused, naming the column: its rows as text would flatten it, and be written back so")
    func twoDimensionsAsOne() async throws {
        let result = try await database.query("SELECT '{{a,b},{c,d}}'::text[] AS grid")
        let error = #expect(throws: ColumnDecodingError.self) { try result[0].decode([String].self, at: 0) }
        #expect("\(error.map { $0 as any Error } ?? CancellationError())".contains("a row of a multi-dimensional array; read the column as nested arrays ([[String]])"), "\(String(describing: error))")
        #expect(try result[0].decode([[String]].self, at: 0) == [["a", "b"], ["c", "d"]])
        #expect(try result[0].decode(String.self, at: 0) == "{{a,b},{c,d}}")
        // Optional elements, in an optional array, too (a stranger's record read the grid so, and
        // wrote it back flattened).
        for refused in [#expect(throws: ColumnDecodingError.self) { try result[0].decode([String?].self, at: 0) },
                        #expect(throws: ColumnDecodingError.self) { try result[0].decode([String?]?.self, at: 0) }] {
            #expect("\(refused.map { $0 as any Error } ?? CancellationError())".contains("read the column as nested arrays ([[String?]])"), "\(String(describing: refused))")
        }
        #expect(try result[0].decode([[String?]].self, at: 0) == [["a", "b"], ["c", "d"]])
    }

    @Test("built-in types whose binary form has no text form here are refused as String, naming the column and the type, with the ::text hint; as ::text they read")
    func noTextForm() async throws {
        let row = try await database.query("SELECT 'a fat cat'::tsvector AS v, 'fat & cat'::tsquery AS q, '$.a'::jsonpath AS p, 'pg_class'::regclass AS r")[0]
        for (column, type) in [("v", "tsvector"), ("q", "tsquery"), ("p", "jsonpath"), ("r", "regclass")] {
            let message = Result { try row.decode(String.self, column: column) }.failure.map { "\($0)" } ?? ""
            #expect(message.contains("column \"\(column)\"") && message.contains(type) && message.contains("select it as \(column)::text"), "\(message)")
        }
        let text = try await database.query("SELECT 'a fat cat'::tsvector::text AS v, 'pg_class'::regclass::text AS r")[0]
        #expect(try text.decode(String.self, column: "v") == "'a' 'cat' 'fat'" && text.decode(String.self, column: "r") == "pg_class")
    }

    @Test("an array column read into the wrong Swift type names the type asked for, not Array<Any>")
    func arrayMismatchNamesTheType() async throws {
        struct Tagged: Decodable { let tags: [String] }
        let result = try await database.query("SELECT 7 AS tags, '{1,2}'::int[] AS grid")
        let error = #expect(throws: ColumnDecodingError.self) { try result.decode(Tagged.self) }
        #expect(error?.swiftType == "Array<String>", "\(String(describing: error))")
        #expect(error.map { "\($0)" } == "column \"tags\": cannot decode PostgreSQL integer as Swift Array<String>")
        // A one-dimensional array read as two: each element names the inner array type.
        let nested = #expect(throws: ColumnDecodingError.self) { try result[0].decode([[String]].self, at: 1) }
        #expect(nested.map { "\($0)" } == "column \"grid[1]\": cannot decode PostgreSQL integer as Swift Array<String>")
    }

    @Test("a time outside a day is refused by the server, not taken for another time: before midnight, and past 24:00")
    func timeOutOfRange() async throws {
        for time in [PostgresTime(microseconds: -5), PostgresTime(hour: 0, second: -5), PostgresTime(hour: 25)] {
            let error = await #expect(throws: PostgresError.self, "\(time)") { try await database.query("SELECT $1::time", [time]) }
            #expect(["22007", "22008"].contains(error?.sqlState ?? ""), "\(time): \(String(describing: error))")
        }
        #expect(PostgresTime(microseconds: -5).description == "-00:00:00.000005")
        #expect(PostgresTime("-00:00:00.000005") == nil)
    }

    /// The first cells of README's type table.
    static func readmeRows() throws -> [String] {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../README.md")
        let lines = try String(contentsOf: readme, encoding: .utf8).components(separatedBy: "\n")
        guard let start = lines.firstIndex(of: "### Column types") else { return [] }
        return lines[start...].drop { !$0.hasPrefix("| PostgreSQL") }.dropFirst(2).prefix { $0.hasPrefix("|") }
            .map { $0.split(separator: "|", omittingEmptySubsequences: false)[1].trimmingCharacters(in: .whitespaces) }
    }

    @Test("every row of the table has samples here, and every sample a row")
    func tableAndSamplesAgree() throws {
        let readme = try Self.readmeRows()
        #expect(readme.count >= 19)
        #expect(Set(readme) == Set(Self.rows.keys))
    }

    @Test("each row: a one-shot read, its String form, written from Swift and from String, checked by SQL",
          arguments: try readmeRows())
    func row(_ row: String) async throws {
        let samples = try #require(Self.rows[row])
        for sample in samples {
            if sample.literal.isEmpty {
                let value = try await database.query("SELECT NULL::integer AS v")[0].decode(Int?.self, column: "v")
                #expect(value == nil)
                try await database.query("CREATE TABLE nulls (v integer)")
                try await database.query("INSERT INTO nulls VALUES ($1)", [try RowEncoder().encode(ColumnTypeSample.Holder(v: value))[0].value])
                #expect(try await database.query("SELECT v IS NULL FROM nulls")[0].decode(Bool.self, at: 0))
                continue
            }
            try await sample.run(database, sample)
        }
    }
}
