internal import CPostgres

/// Statements run as prepared statements: prepared once per connection (see
/// ``PreparedStatements``) and prepared anew when the server forgot them.
extension Connection {
    func runPrepared(_ sql: String, values: [SQLValue], marked: Bool = false) async throws -> QueryResult {
        try SQLText.refuseNUL(sql)
        let connection = try liveConnection(for: sql)
        let bound = try BoundParameters(values, statement: sql)
        do {
            return try await executePrepared(connection, sql, bound, marked: marked)
        } catch let error as PostgresError where PreparedStatements.isStale(error) {
            // The server forgot or invalidated the statement (DISCARD ALL, a schema change):
            // it is prepared anew from now on. Outside a transaction nothing was applied, so it
            // runs again now; inside one the transaction has failed, and the error says so
            // (the library's own writes run theirs again: ``Database/transactionPreparingAnew(_:)``).
            statements.forget(sql)
            guard PQtransactionStatus(connection.pointer) == PQTRANS_IDLE else { throw error }
            return try await executePrepared(connection, sql, bound, marked: marked)
        }
    }

    private func executePrepared(_ connection: LibpqConnection, _ sql: String, _ bound: BoundParameters, marked: Bool) async throws -> QueryResult {
        let name: String
        do {
            name = try await preparedName(connection, sql)
        } catch var error as PostgresError where error.kind == .connectionLost {
            // Only preparing (or deallocating) was under way: the statement did not run.
            error.endedBeforeStatement = true
            throw error
        }
        if marked, bound.count <= Self.markerParameterLimit { return try await executeMarked(connection, sql, name, bound) }
        return try await command(connection, sql) { pg in
            bound.withPointers { count, values, lengths, formats in
                PQsendQueryPrepared(pg, name, count, values, lengths, formats, 1)
            }
        }
    }

    /// The names of the statements prepared in this session.
    static let heldStatements = "SELECT name::text FROM pg_catalog.pg_prepared_statements"

    func preparedName(_ connection: LibpqConnection, _ sql: String) async throws -> String {
        if let name = statements.name(for: sql) { return name }
        if statements.isFull, PQtransactionStatus(connection.pointer) == PQTRANS_IDLE {
            // Those the server still holds (a `DISCARD ALL` may have dropped them), and only ours.
            let held = try await command(connection, Self.heldStatements) { PQsendQuery($0, Self.heldStatements) }
            let own = statements.own(among: try held.map { try $0.decode(String.self, at: 0) })
            if let script = PreparedStatements.deallocation(of: own) { _ = try await command(connection, script) { PQsendQuery($0, script) } }
            statements.removeAll()
        }
        let name = statements.nextName()
        _ = try await command(connection, sql) { PQsendPrepare($0, name, sql, 0, nil) }
        statements.remember(sql, as: name)
        return name
    }
}
