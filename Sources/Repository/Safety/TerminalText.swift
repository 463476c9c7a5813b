/// Text from outside — row values, notification payloads, server messages — made safe to print
/// on a terminal: control characters (C0, DEL and C1, which can move the cursor, clear the
/// screen or set the window title) and the bidirectional formatting characters (which reorder
/// how the rest of a line reads: U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C), the
/// line and paragraph separators (U+2028, U+2029, which some terminals and editors break a line
/// at), the invisible tag characters (U+E0000–U+E007F, which can carry hidden text) and the
/// characters that show as nothing where they stand — every format character (zero-width space
/// U+200B, the word joiner and invisible operators, U+FEFF, the soft hyphen U+00AD…), the
/// combining grapheme joiner U+034F, the Hangul fillers U+115F, U+1160, U+3164, U+FFA0 and
/// U+17B4, U+17B5, with which two names that look alike can differ — are shown as escapes, and
/// the length is capped. The joiners U+200C and U+200D stay: scripts and emoji need them.
///
/// ```swift
/// print(TerminalText.escaped(person.name))   // "\u{1B}]0;pwned\u{07}" prints as \u{1b}]0;pwned\u{7}
/// ```
public enum TerminalText {
    /// `text` with each control character written as `\u{…}` (tabs and newlines too: one
    /// value, one line), cut to `limit` characters with an ellipsis.
    public static func escaped(_ text: String, limit: Int = 500) -> String {
        var result = ""
        var count = 0
        for scalar in text.unicodeScalars {
            guard count < limit else { return result + "…" }
            if isControl(scalar) {
                result += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                result.unicodeScalars.append(scalar)
            }
            count += 1
        }
        return result
    }

    /// Whether `text` holds anything a terminal would act on.
    public static func needsEscaping(_ text: String) -> Bool {
        text.unicodeScalars.contains(where: isControl)
    }

    /// `text` in double quotes for a message, `"` and `\` escaped with a backslash and control
    /// characters as with ``escaped(_:limit:)``: where a name with spaces or quotes begins and
    /// ends stays plain (`"people; DROP TABLE x; --"`).
    static func quotedForMessage(_ text: String, limit: Int = 200) -> String {
        var inner = ""
        for scalar in text.unicodeScalars.prefix(limit) {
            if scalar == "\"" || scalar == "\\" { inner.unicodeScalars.append("\\") }
            inner.unicodeScalars.append(scalar)
        }
        return "\"" + escaped(inner, limit: .max) + (text.unicodeScalars.count > limit ? "…\"" : "\"")
    }

    /// A name for a message: as it is when plain (lowercase ASCII letters, digits, `_`, `.`,
    /// `-`), otherwise as ``quotedForMessage(_:limit:)`` gives it.
    static func name(_ text: String, limit: Int = 200) -> String {
        let plain = !text.isEmpty && text.unicodeScalars.allSatisfy { scalar in
            ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "_" || scalar == "." || scalar == "-"
        }
        return plain && text.unicodeScalars.count <= limit ? text : quotedForMessage(text, limit: limit)
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C, 0x2028, 0x2029, 0xE0000...0xE007F: true
        case 0x20..<0xAD: false  // printable ASCII and Latin-1, without a look at the tables
        case 0x200C, 0x200D: false  // the joiners: scripts and emoji need them
        case 0x34F, 0x115F, 0x1160, 0x3164, 0xFFA0, 0x17B4, 0x17B5: true  // invisible, though not format characters
        default: scalar.properties.generalCategory == .format  // zero-width space, U+FEFF, soft hyphen, word joiner…
        }
    }
}
