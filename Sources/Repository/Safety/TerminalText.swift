/// Text from outside — row values, notification payloads, server messages — made safe to print
/// on a terminal: control characters (C0, DEL and C1, which can move the cursor, clear the
/// screen or set the window title) are shown as escapes, and the length is capped.
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

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
