/// Checks on SQL text before it is sent.
enum SQLText {
    /// Refuses text with a NUL character: libpq sends C strings, so the server would silently
    /// stop reading at the NUL and run only what comes before it.
    static func refuseNUL(_ sql: String) throws {
        guard let index = sql.utf8.firstIndex(of: 0) else { return }
        let before = sql[..<index]
        let line = before.reduce(into: 1) { count, character in if character.isNewline { count += 1 } }
        let column = before.reversed().prefix { !$0.isNewline }.count + 1
        var error = PostgresError(.invalidStatement, "the SQL text contains a NUL character at line \(line), column \(column); PostgreSQL would stop reading there, so nothing was sent")
        error.statementWasNotSent = true
        throw error
    }
}
