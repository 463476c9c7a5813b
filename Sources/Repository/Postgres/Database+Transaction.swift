internal import CPostgres

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
    /// Cancelling the task cancels the running statement and rolls back.
    ///
    /// The connection is the transaction's for the body's run only: keep it no longer (it goes
    /// back to the pool, and another task's transaction runs on it), and end the transaction by
    /// returning or throwing — a body that sends `COMMIT` or `ROLLBACK` itself is refused at
    /// its end. A kept reference is refused (``PostgresError/Kind/closed``, nothing sent) while
    /// the connection sits idle in the pool; once another task has taken it out, what it sends
    /// would run inside that task's transaction.
    ///
    /// Run the transaction's statements on the connection `body` is given. A statement through
    /// the pool instead (`database.query`) runs outside the transaction, on another connection;
    /// when this task already holds every connection of the pool, it throws at once rather
    /// than wait for itself forever.
    ///
    /// When the connection is lost while `BEGIN` runs — the server ended it while it sat idle
    /// in the pool, say — nothing of the transaction has happened and `body` has not been
    /// called: it all runs on another connection. Once `BEGIN` has succeeded, nothing is run
    /// again: when the server ends the connection during `body` (a statement answered with
    /// `terminating connection due to administrator command`, SQLSTATE `57P01`, or any other
    /// loss), that statement throws ``PostgresError/Kind/connectionLost``, the server rolls
    /// the transaction back, and the error reaches the caller — whether to run `body` again is
    /// for the caller to decide, knowing what it does besides its statements. The same goes for
    /// `COMMIT`, which may or may not have committed when its answer is lost.
    ///
    /// Statements are prepared once per connection. After a schema change that alters what a
    /// prepared statement returns (`ALTER TABLE … ADD COLUMN` under a `SELECT *`), PostgreSQL
    /// refuses to run it (`cached plan must not change result type`, SQLSTATE `0A000`): outside
    /// a transaction it is prepared again and run at once; inside one the transaction has
    /// failed, so that error is thrown, and the statement is prepared anew on its next use.
    @discardableResult
    public func transaction<T>(_ body: (Connection) async throws -> T) async throws -> T {
        let connection = try await retryingUnrun {
            let connection = try await acquire()
            do {
                try await connection.begin()
                return connection
            } catch {
                release(connection)
                throw error
            }
        }
        do {
            let result = try await holding { try await connection.runAndCommit(body) }
            release(connection)
            return result
        } catch {
            release(connection)
            throw error
        }
    }
}

extension Database {
    /// ``transaction(_:)``, run again while it fails because a statement in it was prepared
    /// before a schema change (each failure forgets that connection's statement, so this ends):
    /// for the library's own writes, whose bodies do nothing but their statements.
    func transactionPreparingAnew<T>(_ body: (Connection) async throws -> T) async throws -> T {
        var attempts = 0
        while true {
            do {
                return try await transaction(body)
            } catch let error as PostgresError where PreparedStatements.isStale(error) && attempts < Self.stalePlanAttempts {
                attempts += 1
            }
        }
    }

    /// How many times a write transaction runs again for statements prepared before a schema
    /// change: each connection of the pool may hold one, per statement of the write.
    static var stalePlanAttempts: Int { 32 }
}

extension Connection {
    /// Runs `body` in a transaction on this connection: commits when it returns, rolls back
    /// when it throws (and rethrows the original error) — also when the task was cancelled.
    ///
    /// Called inside a transaction already open on this connection (from the body of another
    /// `transaction`), it is nested in it as a savepoint: released when `body` returns, so its
    /// work commits with the outer transaction; rolled back to when `body` throws, undoing its
    /// work alone. It never ends the outer transaction.
    ///
    /// A connection runs one task's transaction at a time: called from another task while one
    /// is open (two child tasks sharing the connection), it throws at once, sending nothing —
    /// nested there, its savepoint would take in the other task's statements, and its rollback
    /// undo them. Give each task a transaction of its own with ``Database/transaction(_:)``.
    @discardableResult
    public nonisolated func transaction<T>(_ body: (Connection) async throws -> T) async throws -> T {
        if try await enterTransaction(ConnectionHold.currentTask) {
            return try await leavingTransaction { try await nested(body) }
        }
        try await sendBegin()
        return try await runAndCommit(body)
    }

    /// Opens a `transaction` scope of `task`: whether it nests in a transaction already open.
    /// - Throws: when a scope of another task is open (see ``transaction(_:)``).
    private func enterTransaction(_ task: Int?) throws -> Bool {
        if let owner = transactionScopes.last, owner != task {
            throw PostgresError(.invalidStatement, "a transaction of another task is open on this connection: a connection runs one task's transaction at a time "
                                + "(nested in it, this one would take in that task's statements, and its rollback undo them); give each task its own, with database.transaction")
        }
        defer { transactionScopes.append(task) }
        return !transactionScopes.isEmpty || isInTransaction
    }

    /// Closes the innermost scope ``enterTransaction(_:)`` opened.
    private func leaveTransaction() {
        if !transactionScopes.isEmpty { transactionScopes.removeLast() }
    }

    /// `body`, then the innermost scope closed, however it ends.
    private nonisolated func leavingTransaction<T>(_ body: () async throws -> T) async throws -> T {
        do {
            let result = try await body()
            await leaveTransaction()
            return result
        } catch {
            await leaveTransaction()
            throw error
        }
    }

    /// Whether a transaction is open on the connection — begun and not ended — as of its last
    /// statement.
    var isInTransaction: Bool {
        guard let handle else { return false }
        let status = PQtransactionStatus(handle.pointer)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
    }

    /// `body` in a savepoint of the open transaction (see ``transaction(_:)``).
    private nonisolated func nested<T>(_ body: (Connection) async throws -> T) async throws -> T {
        let savepoint = "live_nested_\(UInt32.random(in: 0...UInt32.max))"
        try await execute(script: "SAVEPOINT \(savepoint)")
        let result: T
        do {
            result = try await body(self)
        } catch {
            await rollback(to: savepoint)
            throw error
        }
        do {
            try await execute(script: "RELEASE SAVEPOINT \(savepoint)")
        } catch let error as PostgresError where error.sqlState == "25P02" {
            // A statement of the body failed and the body went on (it caught the error): its work
            // is undone, and the outer transaction can go on — as when the body throws.
            await rollback(to: savepoint)
            var failed = PostgresError(.server, "the nested transaction was rolled back because a statement in it failed; the outer transaction goes on",
                                       statement: "RELEASE SAVEPOINT")
            failed.sqlState = "25P02"
            throw failed
        }
        return result
    }

    /// Opens the calling task's transaction scope and sends `BEGIN` (see ``sendBegin()``).
    nonisolated func begin() async throws {
        _ = try await enterTransaction(ConnectionHold.currentTask)
        try await sendBegin()
    }

    /// Sends `BEGIN` for the scope just opened (closed again when it fails). `BEGIN` changes
    /// nothing by itself: lost, it is marked ``PostgresError/statementDidNotRun``, whether or
    /// not the server ran it.
    private nonisolated func sendBegin() async throws {
        do {
            try await execute(script: "BEGIN")
        } catch var error as PostgresError where error.kind == .connectionLost {
            await leaveTransaction()
            error.endedBeforeStatement = true
            throw error
        } catch {
            await leaveTransaction()
            throw error
        }
    }

    /// Runs `body` in the transaction `BEGIN` started, then commits; rolls back when it throws.
    /// Closes the scope ``begin()`` opened.
    nonisolated func runAndCommit<T>(_ body: (Connection) async throws -> T) async throws -> T {
        try await leavingTransaction { try await bodyThenCommit(body) }
    }

    private nonisolated func bodyThenCommit<T>(_ body: (Connection) async throws -> T) async throws -> T {
        let result: T
        do {
            result = try await body(self)
        } catch {
            await rollback()
            throw error
        }
        // A body that ended the transaction itself (COMMIT or ROLLBACK sent through the
        // connection) ran what followed outside it, each statement on its own: COMMIT now would
        // commit nothing and pass for success.
        guard await isInTransaction else {
            throw PostgresError(.invalidStatement, "the transaction's body ended it itself (COMMIT or ROLLBACK): what it ran after that was not in the transaction; "
                                + "end a transaction by returning from its body, or throwing")
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
