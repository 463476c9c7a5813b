extension Database {
    /// Runs `body` in a transaction on one connection: commits when it returns, rolls back
    /// when it throws (and rethrows).
    ///
    /// ```swift
    /// try await database.transaction { connection in
    ///     try await connection.query("UPDATE accounts SET balance = balance - $1 WHERE id = $2", [10, 1])
    ///     try await connection.query("UPDATE accounts SET balance = balance + $1 WHERE id = $2", [10, 2])
    /// }
    /// ```
    ///
    /// Cancelling the task cancels the running statement and rolls back. When the connection
    /// turns out lost before `BEGIN` was sent, the transaction runs on a newly opened one.
    @discardableResult
    public func transaction<T>(_ body: (Connection) async throws -> T) async throws -> T {
        try await retryingUnsent {
            try await withConnection { connection in
                try await connection.transaction(body)
            }
        }
    }
}

extension Connection {
    /// Runs `body` in a transaction on this connection: commits when it returns, rolls back
    /// when it throws (and rethrows the original error) — also when the task was cancelled.
    @discardableResult
    public nonisolated func transaction<T>(_ body: (Connection) async throws -> T) async throws -> T {
        try await execute(script: "BEGIN")
        let result: T
        do {
            result = try await body(self)
        } catch {
            await rollback()
            throw error
        }
        // COMMIT of a transaction in which a statement failed (and was caught) rolls back
        // without an error; that must not pass for success.
        let commit = try await execute(script: "COMMIT")
        if commit.commandTag == "ROLLBACK" {
            var error = PostgresError(.server, "the transaction was rolled back because a statement in it failed", statement: "COMMIT")
            error.sqlState = "25P02"
            throw error
        }
        return result
    }
}
