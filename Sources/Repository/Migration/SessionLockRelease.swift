extension SQLStatements.Statement {
    /// What in this statement releases every advisory lock its session holds — `DISCARD ALL`,
    /// or a call of `pg_advisory_unlock_all` — if anything: run in a migration, it would release
    /// the run's own lock, and another run could then apply the same migration. Words are read
    /// as ``SQLLexer`` reads them: in a string, a quoted name or a comment they do not count; a
    /// function that calls it is not looked into.
    var releasesSessionLocks: String? {
        var sql = sql
        return sql.withUTF8 { buffer in
            guard let bytes = buffer.baseAddress else { return nil }
            var lexer = SQLLexer(bytes, count: buffer.count)
            var isFirst = true, afterDiscard = false
            while true {
                switch lexer.next() {
                case .end, .unclosed:
                    return nil
                case .word:
                    let word = lexer.tokenStart..<lexer.index
                    if afterDiscard, Self.matches(bytes, word, "ALL") { return "DISCARD ALL" }
                    if Self.matches(bytes, word, "PG_ADVISORY_UNLOCK_ALL") { return "pg_advisory_unlock_all()" }
                    afterDiscard = isFirst && Self.matches(bytes, word, "DISCARD")
                default:
                    afterDiscard = false
                }
                isFirst = false
            }
        }
    }
}
