import Repository
import Testing

/// The columns a terminal gives text, which tables are aligned by.
@Suite("Terminal text: widths")
struct TerminalWidthTests {
    @Test("wide and fullwidth characters and emoji take two columns, combining accents and zero-width characters none, the rest one",
          arguments: [("abc", 3), ("漢字", 4), ("한국어", 6), ("Ａ", 2), ("ｱ", 1), ("🎉", 2), ("❤️", 2), ("👩‍💻", 2), ("e\u{301}", 1),
                      ("a\u{200B}b", 2), ("", 0), ("名前 name", 9), ("\\u{1b}", 6)])
    func widths(text: String, columns: Int) {
        #expect(TerminalText.width(of: text) == columns, "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
    }

    @Test("padded to a width: spaces up to it, counted in columns; text already as wide stays as it is")
    func padding() {
        #expect(TerminalText.padded("漢", toWidth: 4) == "漢  ")
        #expect(TerminalText.padded("abc", toWidth: 2) == "abc")
    }
}
