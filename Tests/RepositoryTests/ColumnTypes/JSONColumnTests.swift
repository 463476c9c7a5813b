import Foundation
import Repository
import Testing

/// JSON null reads as nil into an optional; `[T]` of a `Codable` type is written to an array of `json`/`jsonb` as that many documents,
/// and to a `jsonb` column as one JSON array: the same Swift value, each column as it holds it.
@Suite("JSON columns")
struct JSONColumnTests {
    struct Doc: Codable, Equatable, Sendable {
        var a: Int
        var s: String
    }

    struct Holder: Record, Equatable {
        static let tableName = "holders"
        var id: Int64
        var docs: [Doc]
        var notes: [Doc]?
        var whole: [Doc]
    }

    @Test("[Doc] written to jsonb[], json[] and jsonb: documents, documents and one array, read back equal; empty arrays too, and NULL")
    func writeArrays() async throws {
        let database = try await TestServer.makeDatabase()
        try await database.withConnection { try await $0.execute(script: """
            CREATE TABLE holders (id bigint PRIMARY KEY, docs jsonb[] NOT NULL, notes json[], whole jsonb NOT NULL);
            INSERT INTO holders VALUES (1, ARRAY['{"a":1,"s":"x"}'::jsonb], NULL, '[]');
            """) }
        try await LiveSchema.enable("holders", on: database)
        let repository = LiveRepository(database)
        defer { repository.close() }
        let holder = try await repository.read(Holder.self, id: 1)
        #expect(holder.value.docs == [Doc(a: 1, s: "x")])
        let two = [Doc(a: 2, s: "it's \"quoted\", {braced}"), Doc(a: 3, s: "")]
        holder.update { $0.docs = two; $0.notes = two; $0.whole = two }
        try await holder.save()
        let stored = try await database.query("SELECT array_length(docs, 1), array_length(notes, 1), jsonb_typeof(whole), docs[1] ->> 's' FROM holders WHERE id = 1")[0]
        #expect(try stored.decode(Int.self, at: 0) == 2 && stored.decode(Int.self, at: 1) == 2)
        #expect(try stored.decode(String.self, at: 2) == "array" && stored.decode(String.self, at: 3) == "it's \"quoted\", {braced}")
        let fresh = LiveRepository(database)
        defer { fresh.close() }
        #expect(try await fresh.read(Holder.self, id: 1).value == holder.value)
        holder.update { $0.docs = []; $0.notes = nil; $0.whole = [] }
        try await holder.save()
        let emptied = try await database.query("SELECT cardinality(docs), notes IS NULL, whole::text FROM holders WHERE id = 1")[0]
        #expect(try emptied.decode(Int.self, at: 0) == 0)
        #expect(try emptied.decode(Bool.self, at: 1))
        let whole = try emptied.decode(String.self, at: 2)
        #expect(whole == "[]", "an empty array of structs is an empty JSON array, not {}: \(whole)")
        let again = LiveRepository(database)
        defer { again.close() }
        #expect(try await again.read(Holder.self, id: 1).value == holder.value)
    }

    struct Noted: Record, Equatable {
        static let tableName = "noted"
        var id: Int64
        var doc: Doc
        var loose: Doc
        var note: String
    }

    @Test("a NUL in a jsonb document is refused when it is set, as in text, and the edits made with it are written; a json column keeps it; a backslash before u0000 is no NUL (a stranger's run lost the edits made with it)")
    func nulInJSONB() async throws {
        let database = try await TestServer.makeDatabase()
        try await database.withConnection { try await $0.execute(script: """
            CREATE TABLE noted (id bigint PRIMARY KEY, doc jsonb NOT NULL, loose json NOT NULL, note text NOT NULL);
            INSERT INTO noted VALUES (1, '{"a":1,"s":"x"}', '{"a":1,"s":"x"}', 'old');
            """) }
        try await LiveSchema.enable("noted", on: database)
        let repository = LiveRepository(database)
        defer { repository.close() }
        let item = try await repository.read(Noted.self, id: 1)
        item[\.doc].value = Doc(a: 2, s: "a\u{0}b")
        item[\.note].value = "new"
        #expect(item.value.doc.s == "x")
        let error = await #expect(throws: LiveRecordError.self) { try await item.save() }
        #expect("\(error.map { "\($0)" } ?? "")".contains("NUL character, which PostgreSQL cannot store in jsonb"), "\(error.map { "\($0)" } ?? "")")
        item[\.loose].value = Doc(a: 3, s: "a\u{0}b")
        item[\.doc].value = Doc(a: 4, s: "\\u0000 is text here")
        try await item.save()
        let stored = try await database.query("SELECT note, doc ->> 's', loose::text FROM noted WHERE id = 1")[0]
        #expect(try stored.decode(String.self, at: 0) == "new" && stored.decode(String.self, at: 1) == "\\u0000 is text here")
        #expect(try stored.decode(String.self, at: 2).contains("\\u0000"))
    }

    struct Maybe: Record, Equatable {
        static let tableName = "maybes"
        var id: Int64
        var doc: Doc?
        var text: String?
    }

    @Test("JSON null in a json or jsonb column reads as nil into an optional, as SQL NULL does")
    func jsonNull() async throws {
        let database = try await TestServer.makeDatabase()
        try await database.withConnection { try await $0.execute(script: """
            CREATE TABLE maybes (id bigint PRIMARY KEY, doc jsonb, text json);
            INSERT INTO maybes VALUES (1, 'null', ' null '), (2, NULL, NULL), (3, '{"a":1,"s":"x"}', '"t"');
            """) }
        let rows = try await database.query("SELECT * FROM maybes ORDER BY id").decode(Maybe.self)
        #expect(rows == [Maybe(id: 1, doc: nil, text: nil), Maybe(id: 2, doc: nil, text: nil), Maybe(id: 3, doc: Doc(a: 1, s: "x"), text: "\"t\"")])
        // One column read as `String?` is its text, as in a record (it was parsed as a JSON
        // string: a stranger's run).
        let result = try await database.query("SELECT * FROM maybes ORDER BY id")
        #expect(try result.map { try $0.decode(String?.self, column: "doc") } == [nil, nil, #"{"a": 1, "s": "x"}"#])
        #expect(try result.map { try $0.decode(String?.self, column: "text") } == [nil, nil, "\"t\""])
        #expect(try result[2].decode(String.self, column: "text") == "\"t\"")
    }

    struct Counts: Codable, Equatable, Sendable {
        var small: [Int8]
        var ratio: Double
    }

    /// Reads a number, or else a string holding one: its `init(from:)` asks twice.
    struct Lenient: Codable, Equatable, Sendable {
        var value: Int
        init(value: Int) { self.value = value }
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Int.self) {
                value = number
            } else if let number = Int(try container.decode(String.self)) {
                value = number
            } else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a number")
            }
        }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(value)
        }
    }

    struct Tagged: Codable, Equatable, Sendable {
        var lenient: Lenient
        var a: Int
    }

    struct Measured: Record, Equatable {
        static let tableName = "measured"
        var id: Int64
        var doc: Doc?
        var counts: Counts?
        var tagged: Tagged?
        var scores: [String: Int]?
    }

    @Test("a JSON number its Swift type cannot hold is named with its path, not reported as invalid JSON")
    func unfitNumbers() async throws {
        let database = try await TestServer.makeDatabase()
        try await database.withConnection { try await $0.execute(script: """
            CREATE TABLE measured (id bigint PRIMARY KEY, doc jsonb, counts json, tagged jsonb, scores jsonb);
            INSERT INTO measured VALUES (1, '{"a": 99999999999999999999, "s": "x"}', NULL), (2, '{"a": 1.5, "s": "x"}', NULL),
                (3, NULL, '{"small": [1, 300], "ratio": 0.5}'), (4, NULL, '{"small": [], "ratio": 1e400}'),
                (5, '{"a": -3, "s": "x"}', '{"small": [-128, 127], "ratio": -2.5e-3}');
            INSERT INTO measured (id, tagged) VALUES (6, '{"lenient": "12", "a": 0.5}'), (7, '{"lenient": "12", "a": 5}');
            INSERT INTO measured (id, scores) VALUES (8, '{"\\u001b]0;pwned\\u0007": 1.5}');
            """) }
        func failure(_ id: Int) async -> String { await Self.failure(decoding: Measured.self, id: id, in: database) }
        #expect(await failure(1) == #"column "doc": invalid PostgreSQL jsonb value for Swift Doc: the JSON number 99999999999999999999 at a does not fit in Int"#)
        #expect(await failure(2) == #"column "doc": invalid PostgreSQL jsonb value for Swift Doc: the JSON number 1.5 at a does not fit in Int"#)
        #expect(await failure(3) == #"column "counts": invalid PostgreSQL json value for Swift Counts: the JSON number 300 at small[1] does not fit in Int8"#)
        // Beyond what Foundation's JSON parser reads at all: said in general.
        #expect(await failure(4) == #"column "counts": invalid PostgreSQL json value for Swift Counts: Foundation's JSON reader refuses it, though PostgreSQL holds it as valid JSON: a number beyond Double, or nesting deeper than it reads"#)
        // A type that asks again after a failed ask is followed, not recursed into.
        #expect(await failure(6) == #"column "tagged": invalid PostgreSQL jsonb value for Swift Tagged: the JSON number 0.5 at a does not fit in Int"#)
        // A key from the stored JSON reaches the message escaped.
        #expect(await failure(8) == #"column "scores": invalid PostgreSQL jsonb value for Swift Dictionary<String, Int>: the JSON number 1.5 at \u{1b}]0;pwned\u{7} does not fit in Int"#)
        let fitting = try await database.query("SELECT * FROM measured WHERE id IN (5, 7) ORDER BY id").decode(Measured.self)
        #expect(fitting == [Measured(id: 5, doc: Doc(a: -3, s: "x"), counts: Counts(small: [-128, 127], ratio: -2.5e-3)),
                            Measured(id: 7, tagged: Tagged(lenient: Lenient(value: 12), a: 5))])
    }

    /// Why row `id` of `R`'s table does not decode as `R` ("decoded" if it does).
    static func failure<R: Record>(decoding _: R.Type, id: Int, in database: Database) async -> String {
        do {
            _ = try await database.query("SELECT * FROM \(R.tableName) WHERE id = $1", [id]).decode(R.self)
            return "decoded"
        } catch {
            return "\(error)"
        }
    }

    struct Strict: Record {
        static let tableName = "shaped"
        var id: Int64
        var doc: Doc
    }

    @Test("JSON that does not fit the Swift type says what and where in a few words, not Swift's debug description")
    func unfitShapes() async throws {
        let database = try await TestServer.makeDatabase()
        try await database.withConnection { try await $0.execute(script: """
            CREATE TABLE shaped (id bigint PRIMARY KEY, doc jsonb);
            INSERT INTO shaped VALUES (1, 'null'), (2, '{"s": "x"}'), (3, '{"a": "seven", "s": "x"}');
            """) }
        func failure(_ id: Int) async -> String { await Self.failure(decoding: Strict.self, id: id, in: database) }
        #expect(await failure(1) == #"column "doc": invalid PostgreSQL jsonb value for Swift Doc: JSON: null where an object is expected"#)
        #expect(await failure(2) == #"column "doc": invalid PostgreSQL jsonb value for Swift Doc: JSON: missing "a""#)
        #expect(await failure(3) == #"column "doc": invalid PostgreSQL jsonb value for Swift Doc: JSON: expected Int at "a""#)
    }
}
