/// Helpers for SQL text that parameters cannot express.
public enum SQLIdentifier {
    /// `name` as a quoted identifier: `people` → `"people"`, `we"ird` → `"we""ird"`.
    ///
    /// Table and column names cannot be statement parameters; quote them with this whenever
    /// they are not literals in your source code.
    public static func quoted(_ name: String) -> String {
        var quoted = "\""
        for character in name {
            if character == "\"" { quoted.append("\"") }
            quoted.append(character)
        }
        quoted.append("\"")
        return quoted
    }

    /// A dotted name with each part quoted: `public.people` → `"public"."people"`. A part
    /// already in double quotes is kept as it is, so it may hold dots, quotes and spaces:
    /// `crm."odd.name"` → `"crm"."odd.name"`.
    public static func quoted(qualified name: String) -> String {
        parts(of: name).map { $0.isQuoted ? $0.text : quoted($0.text) }.joined(separator: ".")
    }

    /// The parts of a dotted name, split at dots outside double quotes.
    static func parts(of name: String) -> [(text: String, isQuoted: Bool)] {
        var parts: [(String, Bool)] = []
        var current = ""
        var inQuotes = false
        var quotedPart = false
        for character in name {
            if character == "\"" {
                inQuotes.toggle()
                if current.isEmpty { quotedPart = true }
                current.append(character)
            } else if character == ".", !inQuotes {
                parts.append((current, quotedPart && current.hasSuffix("\"")))
                (current, quotedPart) = ("", false)
            } else {
                current.append(character)
            }
        }
        parts.append((current, quotedPart && current.hasSuffix("\"") && !inQuotes))
        return parts
    }
}
