/// The statements prepared on one connection, by SQL text.
struct PreparedStatements {
    /// More distinct statements than this and the connection deallocates them all and starts
    /// over, which bounds the server memory that ad-hoc SQL can pin.
    static let capacity = 512

    private var names: [String: String] = [:]
    private var counter = 0

    func name(for sql: String) -> String? { names[sql] }

    var isFull: Bool { names.count >= Self.capacity }

    /// A name no statement on this connection has used.
    mutating func nextName() -> String {
        counter += 1
        return "s\(counter)"
    }

    mutating func remember(_ sql: String, as name: String) { names[sql] = name }
    mutating func forget(_ sql: String) { names[sql] = nil }
    mutating func removeAll() { names.removeAll() }

    /// Errors that mean a cached statement no longer exists or no longer fits the schema.
    static func isStale(_ error: PostgresError) -> Bool {
        error.sqlState == "26000" /* invalid_sql_statement_name */
            || (error.sqlState == "0A000" && error.message.contains("cached plan"))
    }
}
