import AddressBookKit
import Foundation
import Repository

/// What the commands print: aligned tables for people, JSON with `--json`.
enum Output {
    static func person(_ person: Person, json: Bool) {
        print(json ? encode(person) : table(person))
    }

    static func people(_ people: [Person], json: Bool) {
        print(json ? encode(people) : table(people))
    }

    static func deleted(_ id: Int64, json: Bool) {
        print(json ? encode(["deleted": id]) : "Deleted person \(id).")
    }

    static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let json = try? String(decoding: encoder.encode(value), as: UTF8.self) else { return "null" }
        return escapingControls(json)
    }

    /// `json` with DEL, the C1 controls (a terminal may act on U+009B as on ESC [) and the
    /// line and paragraph separators escaped too: JSONEncoder escapes only U+0000–U+001F. Such
    /// characters stand only inside strings, so the JSON means the same.
    static func escapingControls(_ json: String) -> String {
        guard json.unicodeScalars.contains(where: needsEscape) else { return json }
        var escaped = String.UnicodeScalarView()
        for scalar in json.unicodeScalars {
            guard needsEscape(scalar) else { escaped.append(scalar); continue }
            escaped.append(contentsOf: String(format: "\\u%04x", scalar.value).unicodeScalars)
        }
        return String(escaped)
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }

    /// One row per person; `marks` flags ids (a `*` in the first column).
    static func table(_ people: [Person], marks: Set<Int64> = []) -> String {
        guard !people.isEmpty else { return "No people yet. Add one: demo add NAME [--street STREET]" }
        let rows = people.map { person in
            [(marks.contains(person.id) ? "*" : " ") + String(person.id), shown(person.name, limit: 80),
             shown(person.addresses.map(\.street).joined(separator: "; "), limit: 200)]
        }
        return align([[" ID", "NAME", "ADDRESSES"]] + rows)
    }

    /// A person, then their addresses with short ids (enough for `remove-address`).
    static func table(_ person: Person) -> String {
        var lines = ["\(shown(person.name, limit: 200)) (id \(person.id))"]
        if person.addresses.isEmpty {
            lines.append("  no addresses")
        } else {
            let ids = shortIDs(person.addresses.map(\.id))
            lines.append(align([["  ADDRESS", "STREET"]] + zip(ids, person.addresses).map { ["  " + $0, shown($1.street, limit: 200)] }))
        }
        return lines.joined(separator: "\n")
    }

    /// The addresses' ids as `show` prints them: their first 8 characters, or as many more as
    /// tell them apart (another process may have given two the same first 8), enough for
    /// `remove-address`.
    static func shortIDs(_ ids: [UUID]) -> [String] {
        let texts = ids.map { $0.uuidString.lowercased() }
        let distinct = Set(texts).count
        var length = 8
        while length < 36, Set(texts.map { $0.prefix(length) }).count < distinct { length += 1 }
        return texts.map { String($0.prefix(length)) }
    }

    /// A value from the database, as a terminal may show it: control characters escaped, and
    /// at most `limit` characters. (`--json` prints values exactly.)
    static func shown(_ text: String, limit: Int) -> String {
        TerminalText.escaped(text, limit: limit)
    }

    private static func align(_ rows: [[String]]) -> String {
        // By the columns a terminal gives each character (two for `漢` or `🎉`), not UTF-16 units.
        let widths = (0..<(rows.first?.count ?? 0)).map { column in rows.map { TerminalText.width(of: $0[column]) }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : TerminalText.padded(cell, toWidth: widths[column] + 2)
            }.joined()
        }.joined(separator: "\n")
    }
}
