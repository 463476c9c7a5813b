import Foundation
@testable import Repository
import Testing

/// The column types' text and JSON forms, and JSON's repeated keys and dates, without a server.
@Suite("Column types: text and JSON forms")
struct ColumnTypeCodingTests {
    /// The `Date` nearest to `value` microseconds after 1970, counted from `Date`'s own reference (2001).
    static func micros(_ value: Int64) -> Date { Date(timeIntervalSinceReferenceDate: Double(value - 978_307_200_000_000) / 1_000_000) }

    struct Everything: Codable, Equatable {
        var wait: PostgresInterval
        var opens: PostgresTime
        var opensTz: PostgresTimeTZ
        var address: PostgresInet
        var spot: PostgresPoint
        var seats: PostgresRange<Int64>
        var window: PostgresRange<Date>
        var amounts: PostgresRange<Decimal>
        var written: Date
    }

    @Test("each library type survives JSON as its PostgreSQL text, and reads its own text back")
    func jsonRoundTrip() throws {
        let value = Everything(
            wait: PostgresInterval(months: -14, days: 30, microseconds: -1), opens: PostgresTime(hour: 24),
            opensTz: PostgresTimeTZ(time: PostgresTime(hour: 1, minute: 2, second: 3, microsecond: 4), utcOffset: -12_615),
            address: PostgresInet("::ffff:10.0.0.1/120")!, spot: PostgresPoint(x: -0.0, y: 1e-300),
            seats: .empty, window: PostgresRange(lower: .inclusive(.distantPast), upper: .exclusive(Self.micros(-1))),
            amounts: PostgresRange(lower: .unbounded, upper: .inclusive(Decimal(string: "12.50")!)), written: Self.micros(1_709_214_306_123_457))
        let json = try JSONCoding.encoder.encode(value)
        #expect(try JSONCoding.decoder.decode(Everything.self, from: json) == value)
        let text = String(decoding: json, as: UTF8.self)
        #expect(text.contains(#""wait":"-1 years -2 mons +30 days -00:00:00.000001""#))
        #expect(text.contains(#""written":"2024-02-29T13:45:06.123457Z""#))
        #expect(text.contains(#""opensTz":"01:02:03.000004-03:30:15""#))
        #expect(PostgresInterval(value.wait.description) == value.wait)
        #expect(PostgresInet("1:0:0:1:0:0:0:1")?.description == "1:0:0:1::1")
        #expect(PostgresInet("::")?.description == "::" && PostgresInet("::1")?.description == "::1")
        #expect(PostgresInet("300.1.1.1") == nil && PostgresInet("1::2::3") == nil && PostgresInet("10.0.0.0/33") == nil)
    }

    @Test("JSON dates: any fraction, any offset, PostgreSQL's own text, infinity; written to the microsecond")
    func jsonDates() throws {
        func date(_ text: String) throws -> Date { try JSONCoding.decoder.decode([Date].self, from: Data("[\"\(text)\"]".utf8))[0] }
        #expect(try date("2024-02-29T13:45:06.123Z") == Self.micros(1_709_214_306_123_000))
        #expect(try date("2024-02-29T13:45:06.1234567Z") == Self.micros(1_709_214_306_123_457))
        #expect(try date("2024-02-29T19:15:06.123457+05:30") == Self.micros(1_709_214_306_123_457))
        #expect(try date("2024-02-29 13:45:06.123457+00") == Self.micros(1_709_214_306_123_457))
        #expect(try date("0044-03-15 12:00:00+00 BC") < Date(timeIntervalSince1970: -62_000_000_000))
        #expect(try date("infinity") == .distantFuture && date("-infinity") == .distantPast)
        for micros: Int64 in [0, -1, 1, 946_684_800_000_001, -62_135_596_800_000_000, 253_402_300_799_999_999] {
            let encoded = try JSONCoding.encoder.encode([Self.micros(micros)])
            #expect(try JSONCoding.decoder.decode([Date].self, from: encoded) == [Self.micros(micros)])
        }
    }

    @Test("a json object's repeated keys keep their last value, at any depth; other text is left alone")
    func lastKeyWins() throws {
        func decoded<T: Decodable>(_ text: String, as _: T.Type) throws -> T {
            try JSONDecoder().decode(T.self, from: Data(JSONLastKeyWins.apply(Array(text.utf8))))
        }
        #expect(try decoded(#"{"a": 1, "b": 2, "a": 3}"#, as: [String: Int].self) == ["a": 3, "b": 2])
        #expect(try decoded(#"{"a": {"x": 1, "x": 2}, "a": {"x": 3, "y": [{"z": 1, "z": 4}]}}"#, as: [String: [String: AnyCodable]].self)["a"]?["x"] == .number(3))
        #expect(try decoded(#"[{"k": "a", "k": "b"}, {"\u006b": 1, "k": 2}]"#, as: [[String: AnyCodable]].self) == [["k": .string("b")], ["k": .number(2)]])
        for untouched in [#"{"a": "x:y", "b": [1, 2]}"#, "not json: at all", #"{"a": 1,"#, "[]"] {
            #expect(JSONLastKeyWins.apply(Array(untouched.utf8)) == Array(untouched.utf8))
        }
    }

    @Test("floats print as PostgreSQL prints them")
    func floats() {
        let doubles: [(Double, String)] = [(1e15, "1e+15"), (123_456_789_012_345, "123456789012345"), (0.0001, "0.0001"),
                                           (0.00001, "1e-05"), (-0.0, "-0"), (.nan, "NaN"), (-.infinity, "-Infinity"),
                                           (1.5e-300, "1.5e-300"), (100, "100"), (0.1 + 0.2, "0.30000000000000004")]
        for (value, text) in doubles { #expect(FloatText.postgres(value) == text) }
        let floats: [(Float, String)] = [(1e6, "1e+06"), (123_456, "123456"), (1_234_567, "1.234567e+06"), (0.1, "0.1")]
        for (value, text) in floats { #expect(FloatText.postgres(value) == text) }
    }

    /// A JSON value of a few kinds, for decoding objects whose values vary.
    enum AnyCodable: Codable, Equatable {
        case number(Int), string(String), other
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Int.self) { self = .number(number) } else if let text = try? container.decode(String.self) {
                self = .string(text)
            } else {
                self = .other
            }
        }
        func encode(to encoder: any Encoder) throws {}
    }
}
