internal import CPostgres

/// A marker sent ahead of a statement tells whether the server ended the connection before
/// starting the statement — and so whether running it again elsewhere cannot run it twice.
///
/// The marker is a Describe of the statement, in the same pipeline, just ahead of it: one
/// more message out and one more answer back, no round trip. A backend reads and answers a
/// connection's messages one after another, and when it is told to end (`pg_terminate_backend`,
/// a shutdown, `idle_session_timeout`) its interrupt handler sends what it has answered so far,
/// then its `FATAL`, and it exits. So a `FATAL` from that handler in answer to the marker means
/// the backend never got to the statement behind it. Nothing else is taken for proof: the
/// `FATAL` answering the statement itself (it may have run — rolled back, but what a
/// statement does outside its transaction, such as `nextval`, stays), a connection closed
/// with no error (answers may have been lost), or an error from anything but the backend's
/// interrupt handler (a proxy's, which may have passed the statement on).
extension Connection {
    /// The most parameters a statement sent behind a marker may have. The marker's answer
    /// describes each parameter in 4 bytes, and libpq gives up a connection whose answer of that
    /// kind is longer than 30,000 bytes — after the statement was sent: a statement with more
    /// goes unmarked (if the connection is lost then, it is not run again: whether it ran is
    /// not known). The library's own writes — at most a table's 1,600 columns — stay below.
    static let markerParameterLimit = 7_000

    /// Runs prepared statement `name` behind its marker.
    /// - Throws: the server's `FATAL` marked ``PostgresError/statementDidNotRun``, when it
    ///   answered the marker; otherwise what ``query(_:values:)`` throws.
    func executeMarked(_ connection: LibpqConnection, _ sql: String, _ name: String, _ bound: BoundParameters) async throws -> QueryResult {
        let pg = connection.pointer
        guard PQenterPipelineMode(pg) == 1 else {
            // Nothing was sent, and the connection is unusable as it is.
            isReusable.store(false, ordering: .relaxed)
            var error = lostOrFailed(pg, sql)
            error.statementWasNotSent = true
            throw error
        }
        defer { noteStateAfterStatement(connection) }
        let queued = PQsendDescribePrepared(pg, name) == 1
            && bound.withPointers { count, values, lengths, formats in
                PQsendQueryPrepared(pg, name, count, values, lengths, formats, 1)
            } == 1
            && PQpipelineSync(pg) == 1
        guard queued else { throw abandonPipeline(connection, sql) }
        let marker = try await readMarker(connection, sql)
        // The marker failed otherwise (the statement was deallocated): the statement was skipped.
        var outcome = try await collectResults(connection, sql)
        if let marker { outcome = .failure(marker) }
        guard let sync = try await nextResult(connection, sql) else { throw abandonPipeline(connection, sql, answered: outcome) }
        defer { PQclear(sync) }
        guard PQresultStatus(sync) == PGRES_PIPELINE_SYNC, PQexitPipelineMode(pg) == 1 else { throw abandonPipeline(connection, sql, answered: outcome) }
        wasOpenAfterLastStatement = PQstatus(pg) == CONNECTION_OK
        guard let outcome else { throw lostOrFailed(pg, sql) }
        return try settle(outcome, on: pg).get()
    }

    /// Reads the answer to the marker (a Describe) sent ahead of `sql`: nil when it came. The
    /// error that came instead is thrown when it proves that the backend ended before starting
    /// `sql` — marked so, the connection lost — and returned otherwise.
    func readMarker(_ connection: LibpqConnection, _ sql: String) async throws -> PostgresError? {
        guard case .failure(var error)? = try await collectResults(connection, sql) else { return nil }
        let proves = error.severity == "FATAL" && error.routine == "ProcessInterrupts"
        guard proves || PQstatus(connection.pointer) != CONNECTION_OK else { return error }
        // The connection is gone: whatever was sent behind the marker goes unanswered.
        _ = abandon(connection, sql)
        error.kind = .connectionLost
        error.endedBeforeStatement = proves
        wasLost.store(true, ordering: .relaxed)
        throw error
    }
}
