extension TerminalText {
    /// How many columns a terminal gives `text`: two for each East Asian wide or fullwidth
    /// character (`漢`, `Ａ`) and each emoji shown as one (`🎉`), none for a character made only
    /// of invisible formatting (a zero-width space or joiner), one for any other — a letter with
    /// combining accents is one character, one column. For text already escaped
    /// (``escaped(_:limit:)``): control characters are not counted apart.
    public static func width(of text: String) -> Int {
        text.reduce(0) { $0 + width(of: $1) }
    }

    /// `text` followed by spaces up to `columns` columns (``width(of:)``); as it is when already as wide.
    public static func padded(_ text: String, toWidth columns: Int) -> String {
        text + String(repeating: " ", count: max(0, columns - width(of: text)))
    }

    private static func width(of character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if scalars.allSatisfy({ $0.properties.generalCategory == .format }) { return 0 }
        if isWide(first) || first.properties.isEmojiPresentation { return 2 }
        // A text-style emoji made to show as one (U+FE0F): `❤️`.
        if first.properties.isEmoji, scalars.contains("\u{FE0F}") { return 2 }
        return 1
    }

    /// East Asian Wide and Fullwidth blocks (Unicode's EastAsianWidth W and F, by block).
    private static func isWide(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x1100...0x115F, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
             0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F,
             0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x2FFFD, 0x30000...0x3FFFD:
            true
        default:
            false
        }
    }
}
