/// A password written in SQL — `CREATE ROLE … PASSWORD 'x'`, `ALTER USER … ENCRYPTED PASSWORD
/// E'x'` — hidden from a line that shows a statement (an error, a log): its literal becomes
/// `'***'`. A statement cut short for display may end inside the literal: the rest is hidden too.
enum SQLPasswords {
    /// `sql` with every literal after `PASSWORD` replaced by `'***'`.
    static func redacted(_ sql: String) -> String {
        guard sql.range(of: "password", options: .caseInsensitive) != nil else { return sql }
        // `PASSWORD`, then its string literal (plain, `E'…'` or `U&'…'`, quotes doubled inside),
        // up to its closing quote or the end of the text. Made here, for the rare statement
        // that names a password: a `Regex` is not `Sendable`, to be kept in a static.
        let literal = #/(?i)(password\s+)(?:E|U&)?'(?:[^']|'')*(?:'|$)/#
        return sql.replacing(literal) { match in "\(match.1)'***'" }
    }
}
