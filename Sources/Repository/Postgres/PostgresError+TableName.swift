extension PostgresError {
    /// SQLSTATEs the server gives a name that is no table: no such relation (`42P01`), no such
    /// schema (`3F000`), a name it cannot parse (`42602`, `42601`).
    private static let namesNoTable: Set<String> = ["42P01", "3F000", "42602", "42601"]

    /// Runs `body`, which reads `name` as a table name (`$1::regclass`); when the server says
    /// the name is no table, throws one line naming it as the user spelled it (`what` says where
    /// it came from, `Person.tableName`) — not the library's catalog query.
    @discardableResult
    static func namingTable<T>(_ name: String, as what: String = "table", _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch var error as PostgresError where error.kind == .server && namesNoTable.contains(error.sqlState ?? "") {
            error.message = "\(what) \(TerminalText.quotedForMessage(name)) names no table: \(error.message)"
            (error.statement, error.position) = (nil, nil)
            throw error
        }
    }

    /// The error for following `name` live when it is a view or a materialized view (`relkind`
    /// `v` or `m`), which has no primary key to find rows by and whose rows change through the
    /// tables it reads; nil for a table.
    static func notATable(_ name: String, relkind: String) -> PostgresError? {
        guard relkind == "v" || relkind == "m" else { return nil }
        return PostgresError(.invalidStatement, "\(name) is a \(relkind == "v" ? "view" : "materialized view"): live records and announcements follow tables, "
                             + "by their primary keys; follow the view's result with readAll(_:sql:), which runs it again when a table it reads changes, or read its tables")
    }
}
