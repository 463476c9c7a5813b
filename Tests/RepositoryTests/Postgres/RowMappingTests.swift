import Foundation
import Repository
import Testing

@Suite("Row mapping")
struct RowMappingTests {
    enum Mood: String, Codable, Sendable { case calm, excited }

    struct Note: Codable, Equatable, Sendable {
        var title: String
        var tags: [String]
        var written: Date
    }

    struct Sample: Codable, Equatable, Sendable {
        var id: Int
        var flag: Bool
        var tiny: Int8
        var small: Int16
        var medium: Int32
        var large: Int64
        var unsigned: UInt32
        var ratio: Double
        var single: Float
        var label: String
        var createdAt: Date
        var uuid: UUID
        var blob: Data
        var amount: Decimal
        var mood: Mood
        var nickname: String?
        var scores: [Int]
        var names: [String?]
        var note: Note
        var notes: [Note]
    }

    static let ddl = """
        CREATE TABLE samples (
            id bigint PRIMARY KEY, flag boolean NOT NULL, tiny smallint NOT NULL, small smallint NOT NULL,
            medium integer NOT NULL, large bigint NOT NULL, unsigned bigint NOT NULL,
            ratio double precision NOT NULL, single real NOT NULL, label text NOT NULL,
            created_at timestamptz NOT NULL, uuid uuid NOT NULL, blob bytea NOT NULL, amount numeric NOT NULL,
            mood text NOT NULL, nickname text, scores bigint[] NOT NULL, names text[] NOT NULL,
            note jsonb NOT NULL, notes jsonb NOT NULL
        )
        """

    let database: Database

    init() async throws {
        database = try await TestServer.makeDatabase()
        try await database.query(Self.ddl)
    }

    func insert(_ sample: Sample) async throws {
        let row = try RowEncoder().encode(sample)
        let columns = row.map { SQLIdentifier.quoted($0.column) }.joined(separator: ", ")
        let placeholders = row.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
        try await database.query("INSERT INTO samples (\(columns)) VALUES (\(placeholders))", row.map(\.value))
    }

    func roundTrip(_ sample: Sample) async throws -> Sample {
        try await insert(sample)
        let rows = try await database.query("SELECT * FROM samples WHERE id = $1", [sample.id])
        #expect(rows.count == 1)
        return try rows[0].decode(Sample.self)
    }

    static func sample(id: Int, label: String = "plain") -> Sample {
        Sample(
            id: id, flag: true, tiny: -128, small: 32767, medium: -2_147_483_648, large: .max, unsigned: .max,
            ratio: 0.1 + 0.2, single: 1.5, label: label,
            createdAt: Date(timeIntervalSince1970: 1_700_000_000.123456), uuid: UUID(), blob: Data([0, 1, 2, 255]),
            amount: Decimal(string: "12345678901234567890.0123456789")!, mood: .excited, nickname: nil,
            scores: [1, -2, 3], names: ["a", nil, "c \"quoted\" {braces}, comma"],
            note: Note(title: "n", tags: ["x"], written: Date(timeIntervalSince1970: 1_600_000_000.5)),
            notes: [Note(title: "ü", tags: [], written: Date(timeIntervalSince1970: 0))])
    }

    @Test("every mapped type round-trips, NULL included")
    func everyType() async throws {
        let sample = Self.sample(id: 1)
        #expect(try await roundTrip(sample) == sample)
        var withNickname = Self.sample(id: 2)
        withNickname.nickname = "Ada"
        #expect(try await roundTrip(withNickname) == withNickname)
    }

    @Test("text is stored literally: quotes, semicolons, SQL, emoji, other scripts",
          arguments: ["O'Brien", "Robert'); DROP TABLE samples;--", "a \"b\" \\c", "👩‍💻 ünïcødé 日本語 עברית", "", " ; ; "])
    func literalText(_ text: String) async throws {
        let id = abs(text.hashValue % 1_000_000) + 100
        #expect(try await roundTrip(Self.sample(id: id, label: text)).label == text)
        let count = try await database.query("SELECT count(*) FROM samples").first?.decode(Int.self, at: 0)
        #expect(count == 1)
    }

    @Test("array elements are quoted by Unicode scalar: a quote or backslash followed by a combining mark round-trips",
          arguments: ["\"\u{301}", "\\\u{301}", "a\"\u{308}b\\\u{20DD}", "\u{301}\""])
    func arrayElementQuoting(_ text: String) async throws {
        var sample = Self.sample(id: 300 + abs(text.hashValue % 1_000))
        sample.names = [text, nil, text + text]
        let back = try await roundTrip(sample)
        #expect(back.names.map { $0.map { Array($0.unicodeScalars) } } == sample.names.map { $0.map { Array($0.unicodeScalars) } })
    }

    @Test("a megabyte of text round-trips")
    func megabyte() async throws {
        let text = String(repeating: "0123456789abcdef", count: 65_536)
        #expect(try await roundTrip(Self.sample(id: 3, label: text)).label == text)
    }

    @Test("a NUL character in text is refused before anything is sent")
    func nulCharacter() async throws {
        let error = await #expect(throws: PostgresError.self) {
            try await insert(Self.sample(id: 4, label: "a\u{0}b"))
        }
        #expect(error?.kind == .invalidParameter)
        #expect(error?.statementWasNotSent == true)
    }

    @Test("NULL into a non-optional names the column and both types")
    func nullIntoNonOptional() async throws {
        let row = try await database.query("SELECT NULL::text AS label")[0]
        let error = #expect(throws: ColumnDecodingError.self) { try row.decode(String.self, column: "label") }
        #expect(error?.reason == .null)
        #expect(error?.description == #"column "label" (PostgreSQL text) is NULL, but Swift type String is not optional"#)
        #expect(try row.decode(String?.self, column: "label") == nil)
        // A column type of the library's own, in an array too, is named as asked for (it was String).
        let ranges = try await database.query("SELECT '{NULL}'::int4range[] AS a, NULL::int4range AS r")[0]
        let element = #expect(throws: ColumnDecodingError.self) { try ranges.decode([PostgresRange<Int32>].self, column: "a") }
        #expect(element?.description.contains("is NULL, but Swift type PostgresRange<Int32> is not optional") == true, "\(element?.description ?? "")")
        let whole = #expect(throws: ColumnDecodingError.self) { try ranges.decode(PostgresRange<Int32>.self, column: "r") }
        #expect(whole?.description == #"column "r" (PostgreSQL int4range) is NULL, but Swift type PostgresRange<Int32> is not optional"#, "\(whole?.description ?? "")")
    }

    @Test("a wrong type, an out-of-range value and a missing column are explained")
    func mismatches() async throws {
        let row = try await database.query("SELECT 'x'::text AS name, 300 AS big")[0]
        let wrongType = #expect(throws: ColumnDecodingError.self) { try row.decode(Int.self, column: "name") }
        #expect(wrongType?.description == #"column "name": cannot decode PostgreSQL text as Swift Int"#)
        let tooBig = #expect(throws: ColumnDecodingError.self) { try row.decode(Int8.self, column: "big") }
        #expect(tooBig?.reason == .outOfRange)
        struct NeedsAge: Decodable { var name: String; var ageInYears: Int }
        let missing = #expect(throws: ColumnDecodingError.self) { try row.decode(NeedsAge.self) }
        #expect(missing?.column == "age_in_years")
        #expect(missing?.reason == .missingColumn)
    }

    @Test("numeric values print exactly as the server does")
    func numerics() async throws {
        for literal in ["0", "-0.0001", "123.4500", "10000", "99999999999999999999.999", "NaN", "0.00000001"] {
            let text = try await database.query("SELECT $1::numeric AS n, $1::numeric::text AS t", [literal])[0]
            #expect(try text.decode(String.self, column: "n") == text.decode(String.self, column: "t"))
        }
    }

    @Test("a transaction id (xid, as a row's xmin) decodes as an integer, the whole 32-bit range")
    func transactionIDs() async throws {
        for literal in ["0", "3", "4294967295"] {
            let row = try await database.query("SELECT $1::text::xid AS x, $1::text::bigint AS n", [literal])[0]
            #expect(try row.decode(Int64.self, column: "x") == row.decode(Int64.self, column: "n"))
        }
        await #expect(throws: ColumnDecodingError.self) { try await database.query("SELECT '4294967295'::xid")[0].decode(Int32.self, at: 0) }
    }

    @Test("column naming: snake_case by default, exact or custom when asked")
    func naming() async throws {
        struct Exact: Decodable, Equatable { var createdAt: Int }
        let rows = try await database.query(#"SELECT 1 AS created_at, 2 AS "createdAt", 3 AS "CREATEDAT""#)
        #expect(try rows[0].decode(Exact.self) == Exact(createdAt: 1))
        #expect(try rows[0].decode(Exact.self, columns: .exact) == Exact(createdAt: 2))
        #expect(try rows[0].decode(Exact.self, columns: ColumnNaming { $0.uppercased() }) == Exact(createdAt: 3))
        #expect(ColumnNaming.snakeCase.columnName("userID") == "user_id")
        #expect(ColumnNaming.snakeCase.columnName("htmlURLString") == "html_url_string")
    }
}
