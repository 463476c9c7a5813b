/// The statements prepared on one connection, by SQL text.
struct PreparedStatements {
    /// More distinct statements than this and the connection deallocates them all and starts
    /// over, which bounds the server memory that ad-hoc SQL can pin.
    static let capacity = 512

    private var names: [String: String] = [:]
    private var counter = 0
    /// Statements forgotten while the server may still hold them (a stale one is forgotten
    /// inside a transaction, where it cannot be deallocated): they count toward the capacity
    /// until `DEALLOCATE ALL` frees them.
    private var forgottenHeld = 0

    func name(for sql: String) -> String? { names[sql] }

    var isFull: Bool { names.count + forgottenHeld >= Self.capacity }

    /// A name no statement on this connection has used: `live_s<n>`, apart from the names an
    /// application gives its own `PREPARE`d statements (`s1`, say).
    mutating func nextName() -> String {
        counter += 1
        return "live_s\(counter)"
    }

    mutating func remember(_ sql: String, as name: String) { names[sql] = name }
    /// Forgets the statement prepared for `sql`: the next use prepares it anew, under a new name.
    mutating func forget(_ sql: String) {
        if names.removeValue(forKey: sql) != nil { forgottenHeld += 1 }
    }

    mutating func removeAll() {
        names.removeAll()
        forgottenHeld = 0
    }

    /// Errors that mean a cached statement no longer exists or no longer fits the schema.
    static func isStale(_ error: PostgresError) -> Bool {
        error.sqlState == "26000" /* invalid_sql_statement_name */
            || (error.sqlState == "0A000" && error.message.contains("cached plan"))
    }
}
