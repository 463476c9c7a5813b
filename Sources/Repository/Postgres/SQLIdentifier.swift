/// Helpers for SQL text that parameters cannot express.
public enum SQLIdentifier {
    /// `name` as a quoted identifier: `people` → `"people"`, `we"ird` → `"we""ird"`.
    ///
    /// Table and column names cannot be statement parameters; quote them with this whenever
    /// they are not literals in your source code.
    public static func quoted(_ name: String) -> String {
        // Scalar by scalar: as `Character`s, a quote followed by a combining mark is one
        // character, not a quote, and would end the identifier unescaped.
        var quoted = String.UnicodeScalarView()
        quoted.append("\"")
        for scalar in name.unicodeScalars {
            if scalar == "\"" { quoted.append("\"") }
            quoted.append(scalar)
        }
        quoted.append("\"")
        return String(quoted)
    }

    /// A dotted name with each part quoted: `public.people` → `"public"."people"`. A part
    /// already in double quotes is kept as it is, so it may hold dots, quotes and spaces:
    /// `crm."odd.name"` → `"crm"."odd.name"` — only when it is one quoted identifier, each quote
    /// inside it doubled; any other part, `"a" UNION SELECT …` among them, is quoted whole, so
    /// that whatever `name` holds, the result is a name and nothing else.
    public static func quoted(qualified name: String) -> String {
        parts(of: name).map(quoted(part:)).joined(separator: ".")
    }

    /// One part of ``parts(of:)`` in SQL: as it is when it is one quoted identifier, otherwise quoted.
    static func quoted(part: (text: String, isQuoted: Bool)) -> String {
        part.isQuoted && isOneQuotedIdentifier(part.text) ? part.text : quoted(part.text)
    }

    /// Whether `text` is one double-quoted identifier: a quote, then characters with each
    /// quote doubled, then a closing quote — nothing before or after it.
    static func isOneQuotedIdentifier(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars)
        guard scalars.count >= 3, scalars.first == "\"", scalars.last == "\"" else { return false }
        var index = 1
        while index < scalars.count - 1 {
            if scalars[index] == "\"" {
                guard index + 1 < scalars.count - 1, scalars[index + 1] == "\"" else { return false }
                index += 2
            } else {
                index += 1
            }
        }
        return true
    }

    /// `name` for a message, as `quote_ident` gives it but for keywords: as it is when plain
    /// (lowercase ASCII letters, digits and `_`, not starting with a digit), otherwise
    /// ``quoted(_:)`` — so that `public."odd.name"` and `"public.odd".name` stay apart in a message.
    static func shown(_ name: String) -> String {
        let plain = name.unicodeScalars.first.map { ("a"..."z").contains($0) || $0 == "_" } ?? false
            && name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
        return plain ? name : quoted(name)
    }

    /// A table for a message: ``shown(_:)`` of its schema and of its name, joined by a dot,
    /// control characters escaped (`public."odd.name"`).
    static func shown(schema: String, name: String) -> String {
        TerminalText.escaped(shown(schema) + "." + shown(name), limit: 400)
    }

    /// The parts of a dotted name as the server reads them: a quoted part as written (its
    /// doubled quotes single), a plain one folded to lowercase.
    static func unquotedParts(of name: String) -> [String] {
        parts(of: name).map { part in
            part.isQuoted ? String(part.text.dropFirst().dropLast()).replacingOccurrences(of: "\"\"", with: "\"") : part.text.lowercased()
        }
    }

    /// The parts of a dotted name, split at dots outside double quotes.
    static func parts(of name: String) -> [(text: String, isQuoted: Bool)] {
        var parts: [(String, Bool)] = []
        var current = String.UnicodeScalarView()
        var inQuotes = false
        var quotedPart = false
        func endsQuoted() -> Bool { quotedPart && current.last == "\"" }
        for scalar in name.unicodeScalars {  // scalars, as in quoted(_:)
            if scalar == "\"" {
                inQuotes.toggle()
                if current.isEmpty { quotedPart = true }
                current.append(scalar)
            } else if scalar == ".", !inQuotes {
                parts.append((String(current), endsQuoted()))
                (current, quotedPart) = (String.UnicodeScalarView(), false)
            } else {
                current.append(scalar)
            }
        }
        parts.append((String(current), endsQuoted() && !inQuotes))
        return parts
    }
}

extension SQLIdentifier {
    /// Whether two names are the same bytes, as PostgreSQL compares identifiers: `String`'s `==`
    /// is canonical equivalence, which takes a precomposed `é` for `e` and a combining accent.
    static func sameBytes(_ name: String, _ other: String) -> Bool {
        name.utf8.elementsEqual(other.utf8)
    }
}
