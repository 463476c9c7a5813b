import Foundation
import Repository
import Testing

/// One value of a PostgreSQL type and the Swift value it is: read one-shot, written from Swift
/// and from its `String` form, and checked with SQL.
struct ColumnTypeSample: Sendable, CustomTestStringConvertible {
    let sqlType: String
    let literal: String
    /// SQL true when `v` (the stored column) holds the sample (`$1`: its literal).
    let holds: String
    let run: @Sendable (Database, ColumnTypeSample) async throws -> Void

    var testDescription: String { "\(literal)::\(sqlType)" }

    /// A sample read into `T` as `expected` (compared with `same`) and written from it.
    /// `text`: its `String` form when not the server's (`format('%s', …)` in this session).
    init<T: Codable & Sendable>(_ sqlType: String, _ literal: String, _ expected: T, holds: String? = nil, text: String? = nil,
                                same: @escaping @Sendable (T, T) -> Bool) {
        self.sqlType = sqlType
        self.literal = literal
        self.holds = holds ?? "format('%s', v) = format('%s', $1::text::\(sqlType))"
        run = { database, sample in try await sample.check(database, expected, text: text, same: same) }
    }

    init<T: Codable & Sendable & Equatable>(_ sqlType: String, _ literal: String, _ expected: T, holds: String? = nil, text: String? = nil) {
        self.init(sqlType, literal, expected, holds: holds, text: text, same: { (a: T, b: T) in a == b })
    }

    struct Holder<T: Codable & Sendable>: Codable, Sendable { var v: T }

    func check<T: Codable & Sendable>(_ database: Database, _ expected: T, text expectedText: String?, same: (T, T) -> Bool) async throws {
        // A one-shot read, as the Swift type and as its text form.
        let row = try await database.query("SELECT $1::text::\(sqlType) AS v, format('%s', $1::text::\(sqlType)) AS t", [literal])[0]
        let value = try row.decode(T.self, column: "v")
        #expect(same(value, expected), "\(literal)::\(sqlType) read as \(value), expected \(expected)")
        let text = try row.decode(String.self, column: "v")
        #expect(text == (try expectedText ?? row.decode(String.self, column: "t")), "the String form of \(literal)::\(sqlType)")
        // Written from the Swift value, and from the String form: the server holds the sample.
        let table = "sample_\(UInt32.random(in: 0...UInt32.max))"
        try await database.query("CREATE TABLE \(table) (id int PRIMARY KEY, v \(sqlType))")
        let encoded = try RowEncoder().encode(Holder(v: expected))
        try await database.query("INSERT INTO \(table) (id, v) VALUES (1, $1)", [encoded[0].value])
        try await database.query("INSERT INTO \(table) (id, v) VALUES (2, $1)", [text])
        let held = try await database.query("SELECT id, \(holds) FROM \(table) ORDER BY id", [literal])
        #expect(try held.map { try $0.decode(Bool.self, at: 1) } == [true, true], "\(literal)::\(sqlType) written from Swift, then from its text")
        // Read back from the table: the same value.
        let back = try await database.query("SELECT v FROM \(table) WHERE id = 1")[0].decode(T.self, column: "v")
        #expect(same(back, expected), "\(literal)::\(sqlType) read back as \(back)")
        try await database.query("DROP TABLE \(table)")
    }
}
