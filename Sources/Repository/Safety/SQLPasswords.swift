/// A password written in SQL — `CREATE ROLE … PASSWORD 'x'`, `ALTER USER … ENCRYPTED PASSWORD
/// E'x'`, `PASSWORD $$x$$` — hidden from a line that shows a statement (an error, a log): its
/// literal becomes `'***'`. A statement cut short for display may end inside the literal: the
/// rest is hidden too.
enum SQLPasswords {
    /// `sql` with every literal after `PASSWORD` replaced by `'***'`.
    static func redacted(_ sql: String) -> String {
        guard mayHoldOne(sql) else { return sql }
        return sql.replacing(pattern()) { match in "\(match.1)'***'" }
    }

    /// The text of every literal after `PASSWORD` in `sql` (without its quotes) at least four
    /// characters long: what a server's message may quote back (`at or near "'secret"`), to be
    /// hidden there too. Shorter ones would hide pieces of every word.
    static func literals(in sql: String) -> [String] {
        guard mayHoldOne(sql) else { return [] }
        return sql.matches(of: pattern()).compactMap { match in
            let text = inner(String(match.2), tag: match.3.map(String.init))
            return text.count >= 4 ? text : nil
        }
    }

    /// A literal's text without its quotes: `E'x'` → `x`, `$t$x$t$` → `x`, and one the text
    /// ends inside (`'x`) → `x`.
    private static func inner(_ literal: String, tag: String?) -> String {
        if literal.hasPrefix("$") {
            let delimiter = "$" + (tag ?? "") + "$"
            let body = literal.dropFirst(delimiter.count)
            return String(body.hasSuffix(delimiter) && body.count >= delimiter.count ? body.dropLast(delimiter.count) : body)
        }
        let body = literal.drop { $0 != "'" }.dropFirst()
        return String(body.hasSuffix("'") ? body.dropLast() : body)
    }

    private static func mayHoldOne(_ sql: String) -> Bool {
        sql.range(of: "password", options: .caseInsensitive) != nil
    }

    /// `PASSWORD`, comments after it, then its literal: plain, `E'…'` (a quote escaped by a
    /// backslash too) or `U&'…'`, up to its closing quote or the end of the text; or
    /// dollar-quoted, `$$…$$` or `$tag$…$tag$`. Made here, for the rare statement that names a
    /// password: a `Regex` is not `Sendable`, to be kept in a static.
    private static func pattern() -> Regex<(Substring, Substring, Substring, Substring?)> {
        #/(?is)(password\s+(?:/\*.*?\*/\s*|--[^\n]*\n\s*)*)((?:E|U&)?'(?:[^'\\]|''|\\.)*(?:'|$)|\$([a-z_][a-z_0-9]*)?\$.*?(?:\$\3\$|$))/#
    }
}
