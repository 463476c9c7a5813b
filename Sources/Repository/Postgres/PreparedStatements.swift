/// The statements prepared on one connection, by SQL text.
struct PreparedStatements {
    /// More distinct statements than this and the connection deallocates those it prepared and
    /// starts over, which bounds the server memory that ad-hoc SQL can pin. Statements the
    /// application prepared itself (`PREPARE`) are left alone.
    static let capacity = 512

    private var names: [String: String] = [:]
    private var counter = 0
    /// The names of statements forgotten while the server may still hold them (a stale one is
    /// forgotten inside a transaction, where it cannot be deallocated): they count toward the
    /// capacity until deallocated with the rest.
    private var forgottenHeld: Set<String> = []

    func name(for sql: String) -> String? { names[sql] }

    var isFull: Bool { names.count + forgottenHeld.count >= Self.capacity }

    /// Of the statements the server holds (`pg_prepared_statements`), those this connection
    /// prepared — never one the application prepared itself —, sorted.
    func own(among held: [String]) -> [String] {
        let ours = forgottenHeld.union(names.values)
        return held.filter(ours.contains).sorted()
    }

    /// The script deallocating `names` (each quoted), in one round trip; nil for none.
    static func deallocation(of names: [String]) -> String? {
        names.isEmpty ? nil : names.map { "DEALLOCATE \(SQLIdentifier.quoted($0))" }.joined(separator: "; ")
    }

    /// A name no statement on this connection has used: `live_s<n>`, apart from the names an
    /// application gives its own `PREPARE`d statements (`s1`, say).
    mutating func nextName() -> String {
        counter += 1
        return "live_s\(counter)"
    }

    mutating func remember(_ sql: String, as name: String) { names[sql] = name }
    /// Forgets the statement prepared for `sql`: the next use prepares it anew, under a new name.
    mutating func forget(_ sql: String) {
        if let name = names.removeValue(forKey: sql) { forgottenHeld.insert(name) }
    }

    mutating func removeAll() {
        names.removeAll()
        forgottenHeld = []
    }

    /// Errors that mean a cached statement no longer exists or no longer fits the schema.
    static func isStale(_ error: PostgresError) -> Bool {
        error.sqlState == "26000" /* invalid_sql_statement_name */
            || (error.sqlState == "0A000" && error.message.contains("cached plan"))
    }
}
