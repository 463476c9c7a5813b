import PropertyBased
@testable import Repository
import Testing

/// `snakeCased` reads ASCII names byte by byte; it must say exactly what the character-by-character
/// version says.
@Suite("Column naming")
struct ColumnNamingTests {
    /// Letters of both cases, digits, `_` and other punctuation: every class the rules tell apart.
    static let alphabet = Array("aZbY09_-. ".utf8)

    @Test("the ASCII path agrees with the Unicode one: every name of up to 4 characters")
    func exhaustive() {
        var names = [""]
        var disagreements: [String] = []
        for _ in 1...4 {
            names = names.flatMap { name in Self.alphabet.map { name + String(UnicodeScalar($0)) } }
            for name in names where ColumnNaming.asciiSnakeCased(name) != ColumnNaming.unicodeSnakeCased(name) {
                disagreements.append(name)
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(10))")
    }

    @Test("the ASCII path agrees with the Unicode one: random printable names", .shrinking)
    func random() async {
        await propertyCheck(count: 2000, input: Gen.int(in: 0x20...0x7E).array(of: 0...24)) { codes in
            let name = String(decoding: codes.map(UInt8.init), as: UTF8.self)
            #expect(ColumnNaming.asciiSnakeCased(name) == ColumnNaming.unicodeSnakeCased(name), "\(name)")
        }
    }

    @Test("names beyond ASCII take the Unicode path")
    func unicode() {
        #expect(ColumnNaming.asciiSnakeCased("prénomÉlève") == nil)
        #expect(ColumnNaming.snakeCase.columnName("prénomÉlève") == "prénom_élève")
        #expect(ColumnNaming.snakeCase.columnName("htmlURL2") == "html_url2")
    }
}
