extension Database {
    /// A statement in a pipelined batch: its task waits for its result, or to send the batch.
    struct PipelinedStatement: Sendable {
        let sql: String
        let values: [SQLValue]
        /// nil for the statement of the task that sends its batch.
        let waiter: CheckedContinuation<PipelineTurn, Never>?
    }

    /// What a waiting statement's task is resumed with.
    enum PipelineTurn: Sendable {
        /// Send this batch (the task's own statement first) and hand out its results.
        case send([PipelinedStatement])
        /// The statement's outcome.
        case done(Result<QueryResult, PostgresError>)
    }

    /// How many pipelined batches a pool of `maximumConnections` sends at once: one per
    /// connection. A statement then waits for a batch only where it would otherwise wait for
    /// a connection, and one held up by a lock holds up no more than a connection of its own.
    static func pipelineLanes(_ maximumConnections: Int) -> Int { maximumConnections }

    /// Runs one statement on a pooled connection, sent together with the statements other
    /// tasks run this way at the same time: while every lane (one per connection of the pool)
    /// has a batch under way, those that arrive queue up, and go out as the next batch in
    /// libpq's pipeline mode — one round trip for all, each statement still its own
    /// transaction (see ``Connection/pipeline(_:)``). For statements many tasks run at once,
    /// such as the writes of live values. Not cancellable.
    func pipelined(_ sql: String, _ values: [SQLValue]) async throws -> QueryResult {
        let start = ContinuousClock.now
        let alone = PipelinedStatement(sql: sql, values: values, waiter: nil)
        let outcome: Result<QueryResult, PostgresError>
        if pipelineQueue.withLock({ $0.sendsAlone() }) {
            outcome = await send([alone])
        } else {
            let turn = await withCheckedContinuation { waiter in
                let statement = PipelinedStatement(sql: sql, values: values, waiter: waiter)
                // The batch under way may have ended meanwhile: then this one goes alone.
                if pipelineQueue.withLock({ $0.arrive(statement) }) { waiter.resume(returning: .send([alone])) }
            }
            switch turn {
            case .done(let result): outcome = result
            case .send(let batch): outcome = await send(batch)
            }
        }
        switch outcome {
        case .success(let result):
            metrics.statementDuration.recordSince(start)
            return result
        case .failure(let error):
            metrics.statementFailed(error)
            throw error
        }
    }

    /// Sends `batch` (whose first statement is the caller's), hands the next batch on, and
    /// resumes the others with their outcomes; returns the caller's.
    private func send(_ batch: [PipelinedStatement]) async -> Result<QueryResult, PostgresError> {
        metrics.pipelineBatchSize.record(batch.count)
        let outcomes: [Result<QueryResult, PostgresError>]
        do {
            outcomes = try await retryingUnsent {
                try await withConnection { connection in
                    if batch.count == 1 { return [.success(try await connection.query(batch[0].sql, values: batch[0].values))] }
                    return try await connection.pipeline(batch.map { ($0.sql, $0.values) })
                }
            }
        } catch {
            let failure = error as? PostgresError ?? PostgresError(.server, "\(error)")
            outcomes = batch.map { _ in .failure(failure) }
        }
        if let next = pipelineQueue.withLock({ $0.batchDone() }) { next[0].waiter?.resume(returning: .send(next)) }
        for (statement, outcome) in zip(batch, outcomes).dropFirst() { statement.waiter?.resume(returning: .done(outcome)) }
        return outcomes[0]
    }
}
