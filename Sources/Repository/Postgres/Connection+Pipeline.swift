internal import CPostgres

extension Connection {
    /// Runs `batch` in libpq's pipeline mode: all statements are sent at once, each followed
    /// by a sync, so each is its own transaction — one failing does not undo or stop the
    /// others — and the server answers them all in about one round trip. Returns each
    /// statement's outcome, in order. Not cancellable: the statements may already be on their way.
    ///
    /// The server runs them one after another, so a statement waiting for a lock would hold up
    /// those behind it: every statement but the last waits at most ``pipelineLockTimeout`` for
    /// a lock (a `lock_timeout` local to its transaction), then fails with SQLSTATE `55P03`
    /// having changed nothing — its caller may run it again alone.
    ///
    /// When the connection is lost or stops answering, the statements still without an answer
    /// fail with ``PostgresError/Kind/connectionLost``: each may or may not have been applied.
    /// - Throws: only when none of them ran: nothing was sent to run (the connection is closed,
    ///   or was found lost before the batch went out), the error marked
    ///   ``PostgresError/statementWasNotSent``; or the server ended the connection before
    ///   starting the first (its `FATAL` answered the marker sent ahead of the batch, see
    ///   ``executeMarked(_:_:_:_:)``), marked ``PostgresError/statementDidNotRun``.
    func pipeline(_ batch: [(sql: String, values: [SQLValue])]) async throws -> [Result<QueryResult, PostgresError>] {
        try await asStatement(nil, nil) { try await runPipeline(batch) }
    }

    /// How long a pipelined statement with others behind it waits for a lock.
    static let pipelineLockTimeout = "100ms"

    /// Bounds the next statement's lock waits, in its transaction only.
    private static let boundLockWaits = "SELECT set_config('lock_timeout', '\(pipelineLockTimeout)', true)"

    private func runPipeline(_ batch: [(sql: String, values: [SQLValue])]) async throws -> [Result<QueryResult, PostgresError>] {
        guard let first = batch.first else { return [] }
        let connection = try liveConnection(for: first.sql)
        // Bound and prepared first, outside pipeline mode (a new statement costs one round trip, once).
        var results = [Result<QueryResult, PostgresError>?](repeating: nil, count: batch.count)
        var ready: [(index: Int, bound: BoundParameters)] = []
        for (index, statement) in batch.enumerated() {
            do {
                try SQLText.refuseNUL(statement.sql)
                let bound = try BoundParameters(statement.values, statement: statement.sql)
                _ = try await preparedName(connection, statement.sql)
                ready.append((index, bound))
            } catch let error as PostgresError {
                // Lost while preparing: nothing of the batch ran, and all of it may go elsewhere.
                if error.kind == .connectionLost { throw Self.unsent(error) }
                results[index] = .failure(error)
            }
        }
        // Preparing one may have deallocated the others (a full cache): this names them all again.
        var names: [String] = []
        do {
            for (index, _) in ready { names.append(try await preparedName(connection, batch[index].sql)) }
        } catch let error as PostgresError {
            throw Self.unsent(error)
        }
        let sent = zip(ready, names).map { (sql: batch[$0.index].sql, name: $1, bound: $0.bound) }
        if !sent.isEmpty {
            for (entry, outcome) in zip(ready, try await send(sent, on: connection)) { results[entry.index] = outcome }
        }
        // A statement the server forgot or invalidated (a schema change) failed before it did
        // anything: run it again, prepared anew.
        var forgotten: Set<String> = []
        for (index, outcome) in results.enumerated() {
            guard case .failure(let error)? = outcome, PreparedStatements.isStale(error) else { continue }
            if forgotten.insert(batch[index].sql).inserted { statements.forget(batch[index].sql) }
            do {
                results[index] = .success(try await runPrepared(batch[index].sql, values: batch[index].values))
            } catch {
                results[index] = .failure(error as? PostgresError ?? PostgresError(.server, "\(error)"))
            }
        }
        var outcomes: [Result<QueryResult, PostgresError>] = []
        for result in results {
            switch result {
            case .success(let rows)?: outcomes.append(.success(await describe(rows)))
            case .failure(let error)?: outcomes.append(.failure(error))
            case nil: outcomes.append(.failure(PostgresError(.server, "the statement got no answer")))
            }
        }
        return outcomes
    }

    /// Sends the prepared statements in pipeline mode, each followed by a sync, and reads
    /// each one's results and then its sync.
    private func send(_ sent: [(sql: String, name: String, bound: BoundParameters)], on connection: LibpqConnection) async throws -> [Result<QueryResult, PostgresError>] {
        let pg = connection.pointer
        // None of them was sent: they may go on another connection.
        guard PQenterPipelineMode(pg) == 1 else { throw Self.unsent(lostOrFailed(pg, sent[0].sql)) }
        var outcomes: [Result<QueryResult, PostgresError>] = []
        defer { noteStateAfterStatement(connection) }
        let bounded = sent.indices.dropLast()
        guard PQsendDescribePrepared(pg, sent[0].name) == 1 else {
            let failure = abandonPipeline(connection, sent[0].sql)
            return sent.map { _ in .failure(failure) }
        }
        for (index, statement) in sent.enumerated() {
            let guarded = !bounded.contains(index) || PQsendQueryParams(pg, Self.boundLockWaits, 0, nil, nil, nil, nil, 1) == 1
            let queued = guarded && statement.bound.withPointers { count, values, lengths, formats in
                PQsendQueryPrepared(pg, statement.name, count, values, lengths, formats, 1)
            } == 1
            guard queued, PQpipelineSync(pg) == 1 else {
                // Nothing more can be sent: what was queued may still be answered, but the
                // connection is in an unknown state. Give it up.
                let failure = abandonPipeline(connection, statement.sql)
                return sent.map { _ in .failure(failure) }
            }
        }
        // The marker's answer first: a proof that none of them ran is thrown.
        let marker: PostgresError?
        do {
            marker = try await readMarker(connection, sent[0].sql)
        } catch let error as PostgresError where error.statementDidNotRun {
            throw error
        } catch {
            let failure = error as? PostgresError ?? abandonPipeline(connection, sent[0].sql)
            return sent.map { _ in .failure(failure) }
        }
        for (index, statement) in sent.enumerated() {
            do {
                // The lock bound's own result first; if it (or the marker) failed, the statement was not run.
                let bound = bounded.contains(index) ? try await collectResults(connection, Self.boundLockWaits) : nil
                var outcome = try await collectResults(connection, statement.sql)
                if case .failure(let error)? = bound { outcome = .failure(error) }
                if index == 0, let marker { outcome = .failure(marker) }
                guard let sync = try await nextResult(connection, statement.sql) else { throw abandonPipeline(connection, statement.sql, answered: outcome) }
                defer { PQclear(sync) }
                guard PQresultStatus(sync) == PGRES_PIPELINE_SYNC else { throw abandonPipeline(connection, statement.sql, answered: outcome) }
                wasOpenAfterLastStatement = PQstatus(pg) == CONNECTION_OK
                outcomes.append(outcome.map { settle($0, on: pg) } ?? .failure(lostOrFailed(pg, statement.sql)))
            } catch {
                let failure = error as? PostgresError ?? abandonPipeline(connection, statement.sql)
                return outcomes + sent.dropFirst(outcomes.count).map { _ in .failure(failure) }
            }
        }
        // Every result was read, so this cannot fail but on a broken connection: give it up then.
        if PQexitPipelineMode(pg) != 1 { _ = abandonPipeline(connection, sent[sent.count - 1].sql) }
        return outcomes
    }

    /// `error`, marked as met before any statement of the batch was sent to run.
    private static func unsent(_ error: PostgresError) -> PostgresError {
        var error = error
        error.statementWasNotSent = true
        return error
    }

    /// Drops a connection whose pipeline went wrong: what it was answering is unknown.
    func abandonPipeline(_ connection: LibpqConnection, _ sql: String) -> PostgresError {
        var error = abandon(connection, sql)
        if PQstatus(connection.pointer) != CONNECTION_OK {
            error = lostOrFailed(connection.pointer, sql)
            error.kind = .connectionLost
        }
        return error
    }

    /// The same, once a statement was answered but its sync never came: the server's own error
    /// for the statement (the `FATAL` of a backend told to end while it ran), with its SQLSTATE,
    /// is what went wrong — the connection lost — rather than libpq's word that it closed.
    func abandonPipeline(_ connection: LibpqConnection, _ sql: String, answered outcome: Result<QueryResult, PostgresError>?) -> PostgresError {
        let abandoned = abandonPipeline(connection, sql)
        guard case .failure(var error)? = outcome, error.sqlState != nil, error.severity == "FATAL" else { return abandoned }
        error.kind = .connectionLost
        return error
    }
}
