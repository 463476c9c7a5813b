import Foundation
@testable import Repository
import Testing

/// The encoder's per-type entry points (what synthesized `Encodable` calls for scalars) against
/// its generic path, and the names and changes a record's encoding gives, with no database.
@Suite("Row encoder")
struct RowEncoderTests {
    /// Every scalar synthesized `Encodable` asks for by type.
    struct Scalars: Encodable {
        var flag: Bool
        var label: String
        var ratio: Double
        var single: Float
        var whole: Int
        var tiny: Int8
        var small: Int16
        var medium: Int32
        var large: Int64
        var natural: UInt
        var byte: UInt8
        var word: UInt16
        var double: UInt32
        var quad: UInt64
    }

    /// The same values, each encoded through the generic `encode<T>` (a value of a type the
    /// container has no entry point of its own for).
    struct Generic: Encodable {
        struct Boxed<T: Encodable>: Encodable {
            let value: T
            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                try container.encode(value)
            }
        }

        let scalars: Scalars

        enum Key: String, CodingKey {
            case flag, label, ratio, single, whole, tiny, small, medium, large, natural, byte, word, double, quad
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(Boxed(value: scalars.flag), forKey: .flag)
            try container.encode(Boxed(value: scalars.label), forKey: .label)
            try container.encode(Boxed(value: scalars.ratio), forKey: .ratio)
            try container.encode(Boxed(value: scalars.single), forKey: .single)
            try container.encode(Boxed(value: scalars.whole), forKey: .whole)
            try container.encode(Boxed(value: scalars.tiny), forKey: .tiny)
            try container.encode(Boxed(value: scalars.small), forKey: .small)
            try container.encode(Boxed(value: scalars.medium), forKey: .medium)
            try container.encode(Boxed(value: scalars.large), forKey: .large)
            try container.encode(Boxed(value: scalars.natural), forKey: .natural)
            try container.encode(Boxed(value: scalars.byte), forKey: .byte)
            try container.encode(Boxed(value: scalars.word), forKey: .word)
            try container.encode(Boxed(value: scalars.double), forKey: .double)
            try container.encode(Boxed(value: scalars.quad), forKey: .quad)
        }
    }

    static let samples: [Scalars] = [
        Scalars(flag: true, label: "plain", ratio: 1.5, single: 0.1, whole: 42, tiny: 1, small: 2, medium: 3, large: 4,
                natural: 5, byte: 6, word: 7, double: 8, quad: 9),
        Scalars(flag: false, label: "é\u{301} 'quoted' \\ {} , \"", ratio: -0.0, single: -.infinity, whole: .min, tiny: .min, small: .min,
                medium: .min, large: .min, natural: 0, byte: 0, word: 0, double: 0, quad: 0),
        Scalars(flag: true, label: "", ratio: .nan, single: .nan, whole: .max, tiny: .max, small: .max, medium: .max, large: .max,
                natural: .max, byte: .max, word: .max, double: .max, quad: .max),
        Scalars(flag: false, label: "1e308", ratio: .infinity, single: .leastNonzeroMagnitude, whole: -1, tiny: -1, small: -1,
                medium: -1, large: -1, natural: 1, byte: 1, word: 1, double: 1, quad: 1),
        Scalars(flag: true, label: "x", ratio: .leastNonzeroMagnitude, single: .greatestFiniteMagnitude, whole: 0, tiny: 0,
                small: 0, medium: 0, large: 0, natural: 2, byte: 2, word: 2, double: 2, quad: 2),
    ]

    @Test("each scalar's own entry point encodes exactly as the generic path does", arguments: samples.indices)
    func scalarsAsGeneric(_ index: Int) throws {
        let sample = Self.samples[index]
        for naming in [ColumnNaming.snakeCase, .exact] {
            let direct = try RowEncoder(naming: naming).encode(sample)
            let generic = try RowEncoder(naming: naming).encode(Generic(scalars: sample))
            #expect(direct.map(\.column) == generic.map(\.column))
            #expect(direct.map(\.value) == generic.map(\.value))
            #expect(direct.count == 14)
        }
    }

    /// Foundation's scalars, as properties (`encode<T>` told by type) and boxed (the generic path).
    struct Foundations: Encodable {
        var date: Date
        var uuid: UUID
        var amount: Decimal
        var blob: Data
        var later: Date?

        enum Key: String, CodingKey { case date, uuid, amount, blob, later }

        func boxed() -> some Encodable {
            struct Box: Encodable {
                let of: Foundations
                func encode(to encoder: any Encoder) throws {
                    var container = encoder.container(keyedBy: Key.self)
                    try container.encode(Generic.Boxed(value: of.date), forKey: .date)
                    try container.encode(Generic.Boxed(value: of.uuid), forKey: .uuid)
                    try container.encode(Generic.Boxed(value: of.amount), forKey: .amount)
                    try container.encode(Generic.Boxed(value: of.blob), forKey: .blob)
                    if let later = of.later { try container.encode(Generic.Boxed(value: later), forKey: .later) } else { try container.encodeNil(forKey: .later) }
                }
            }
            return Box(of: self)
        }
    }

    @Test("Date, UUID, Decimal and Data, told by type, encode exactly as the generic path does")
    func foundationScalarsAsGeneric() throws {
        let samples = [
            Foundations(date: Date(timeIntervalSince1970: 1_700_000_000.123456), uuid: UUID(), amount: Decimal(string: "-12345.678900")!,
                        blob: Data([0, 1, 255]), later: nil),
            Foundations(date: Date(timeIntervalSince1970: -62_135_596_800), uuid: UUID(uuidString: "00000000-0000-0000-0000-000000000000")!,
                        amount: .nan, blob: Data(), later: Date(timeIntervalSinceReferenceDate: 0.5)),
            Foundations(date: .distantFuture, uuid: UUID(), amount: Decimal.greatestFiniteMagnitude, blob: Data(repeating: 7, count: 1000),
                        later: .distantPast),
        ]
        for sample in samples {
            let direct = try RowEncoder().encode(sample)
            let generic = try RowEncoder().encode(sample.boxed())
            #expect(direct.map(\.column) == generic.map(\.column))
            #expect(direct.map(\.value) == generic.map(\.value))
            #expect(direct.count == 5)
        }
    }

    struct Person: Record {
        static let tableName = "people"
        var id: Int64
        var firstName: String
        var nickname: String?
    }

    /// A record whose encoding leaves out a property, as a hand-written `encode(to:)` may.
    struct Sparse: Record {
        static let tableName = "sparse"
        var id: Int64
        var firstName: String
        var note: String?

        enum CodingKeys: String, CodingKey { case id, firstName, note }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            if let note { try container.encode(note, forKey: .note) }
            try container.encode(firstName, forKey: .firstName)
        }
    }

    @Test("a record's columns are named by its naming, whatever was encoded before")
    func columnNames() throws {
        let person = Person(id: 1, firstName: "Ada", nickname: nil)
        for _ in 0..<2 {
            let columns = try RecordColumns(person).values
            #expect(columns.map(\.property) == ["id", "firstName", "nickname"])
            #expect(columns.map(\.column) == ["id", "first_name", "nickname"])
            #expect(columns.map(\.value) == [.text("1"), .text("Ada"), .null])
        }
        // A type whose encodings differ in their properties: each is named as it is.
        let withNote = try RecordColumns(Sparse(id: 1, firstName: "Ada", note: "n")).values
        let withoutNote = try RecordColumns(Sparse(id: 1, firstName: "Ada", note: nil)).values
        #expect(withNote.map(\.column) == ["id", "note", "first_name"])
        #expect(withoutNote.map(\.column) == ["id", "first_name"])
        #expect(try RecordColumns(Sparse(id: 1, firstName: "Ada", note: "n")).values.map(\.column) == ["id", "note", "first_name"])
    }

    /// A record whose one property is encoded under a key spelled one of two ways that `String`
    /// takes as equal (a precomposed `é`, or `e` and a combining accent): two columns to PostgreSQL.
    struct Respelled: Record {
        static let tableName = "respelled"
        var id: Int64
        var composed: Bool

        struct Key: CodingKey {
            let stringValue: String
            init(stringValue: String) { self.stringValue = stringValue }
            var intValue: Int? { nil }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws { (id, composed) = (0, true) }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(id, forKey: Key(stringValue: "id"))
            try container.encode("v", forKey: Key(stringValue: composed ? "caf\u{E9}" : "cafe\u{301}"))
        }

        init(composed: Bool) { (id, self.composed) = (1, composed) }
    }

    @Test("names canonically equivalent but of other bytes are other columns: named, and written, each as spelled")
    func respelledNames() throws {
        let composed = try RecordColumns(Respelled(composed: true)).values.map(\.column)
        let decomposed = try RecordColumns(Respelled(composed: false)).values.map(\.column)
        #expect(Array(composed[1].utf8) == Array("caf\u{E9}".utf8))
        #expect(Array(decomposed[1].utf8) == Array("cafe\u{301}".utf8))

        // Both in one row: two columns, neither value written over the other.
        struct Both: Encodable {
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Respelled.Key.self)
                try container.encode("composed", forKey: Respelled.Key(stringValue: "caf\u{E9}"))
                try container.encode("decomposed", forKey: Respelled.Key(stringValue: "cafe\u{301}"))
            }
        }
        #expect(try RowEncoder().encode(Both()).map(\.value) == [.text("composed"), .text("decomposed")])

        let statements = UpdateStatements()
        let one = UpdateStatements.Shape(columns: ["caf\u{E9}"], emptyArrays: [false])
        let other = UpdateStatements.Shape(columns: ["cafe\u{301}"], emptyArrays: [false])
        #expect(one != other)
        #expect(statements.sql(for: one) { "first" } == "first")
        #expect(statements.sql(for: other) { "second" } == "second")
        #expect(statements.sql(for: UpdateStatements.Shape(columns: ["caf\u{E9}"], emptyArrays: [false])) { "built again" } == "first")
        #expect(statements.sql(for: UpdateStatements.Shape(columns: ["caf\u{E9}"], emptyArrays: [true])) { "an empty array" } == "an empty array")
        #expect(statements.count == 3)
    }

    @Test("changed properties: by position when two encodings list the same, by name when they do not")
    func changedProperties() throws {
        let before = try RecordColumns(Person(id: 1, firstName: "Ada", nickname: nil))
        #expect(try RecordColumns(Person(id: 1, firstName: "Ada", nickname: nil)).changedProperties(since: before).isEmpty)
        #expect(try RecordColumns(Person(id: 1, firstName: "Grace", nickname: "G")).changedProperties(since: before) == ["firstName", "nickname"])

        let sparse = try RecordColumns(Sparse(id: 1, firstName: "Ada", note: nil))
        #expect(try RecordColumns(Sparse(id: 1, firstName: "Ada", note: "n")).changedProperties(since: sparse) == ["note"])
        #expect(try RecordColumns(Sparse(id: 1, firstName: "Bo", note: "n")).changedProperties(since: sparse) == ["note", "firstName"])
        #expect(try sparse.changedProperties(since: RecordColumns(Sparse(id: 1, firstName: "Bo", note: "n"))) == ["firstName"])
    }

    @Test("an edit of the key is refused; other changes are writable")
    func writableChanges() throws {
        let before = try RecordColumns(Person(id: 1, firstName: "Ada", nickname: nil))
        #expect(try RecordColumns(Person(id: 1, firstName: "Bo", nickname: nil)).writableChanges(since: before) == ["firstName"])
        #expect(throws: PostgresError.self) { try RecordColumns(Person(id: 2, firstName: "Ada", nickname: nil)).writableChanges(since: before) }
    }
}
