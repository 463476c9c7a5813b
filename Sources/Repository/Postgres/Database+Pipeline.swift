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
        /// The statement gave up waiting for a lock so as not to hold up the batch: run it alone.
        case runAlone
    }

    /// Runs one statement on a pooled connection, sent together with the statements other
    /// tasks run this way at the same time: while every lane (one per connection of the pool)
    /// has a batch under way, those that arrive queue up, and go out as the next batch in
    /// libpq's pipeline mode — one round trip for all, each statement still its own
    /// transaction (see ``Connection/pipeline(_:)``). A statement batched with others behind it
    /// waits at most 100 ms for a lock, then runs again alone, so that it holds them up no
    /// longer. For statements many tasks run at once, such as the writes of live values (whose
    /// tasks are never cancelled: a cancelled task that sends a batch fails the others' too).
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
            case .runAlone: outcome = await runAlone(sql, values)
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
    /// resumes the others with their outcomes; returns the caller's. A statement that gave up
    /// waiting for a lock (see ``Connection/pipeline(_:)``) runs again alone, on its own task.
    private func send(_ batch: [PipelinedStatement]) async -> Result<QueryResult, PostgresError> {
        metrics.pipelineBatchSize.record(batch.count)
        let outcomes: [Result<QueryResult, PostgresError>]
        if batch.count == 1 {
            outcomes = [await runAlone(batch[0].sql, batch[0].values)]
        } else {
            do {
                outcomes = try await retryingUnrun { try await withPooledConnection { try await $0.pipeline(batch.map { ($0.sql, $0.values) }) } }
            } catch {
                outcomes = batch.map { _ in .failure(error as? PostgresError ?? PostgresError(.server, "\(error)")) }
            }
        }
        if let next = pipelineQueue.withLock({ $0.batchDone() }) { next[0].waiter?.resume(returning: .send(next)) }
        let heldBack = outcomes.indices.map { batch.count > 1 && $0 < batch.count - 1 && Self.gaveUpOnLock(outcomes[$0]) }
        for index in batch.indices.dropFirst() {
            batch[index].waiter?.resume(returning: heldBack[index] ? .runAlone : .done(outcomes[index]))
        }
        return heldBack[0] ? await runAlone(batch[0].sql, batch[0].values) : outcomes[0]
    }

    /// Whether a batched statement stopped waiting for a lock (SQLSTATE 55P03, lock_not_available).
    private static func gaveUpOnLock(_ outcome: Result<QueryResult, PostgresError>) -> Bool {
        if case .failure(let error) = outcome { return error.sqlState == "55P03" }
        return false
    }

    /// Runs a statement by itself on a pooled connection, outside the lanes.
    private func runAlone(_ sql: String, _ values: [SQLValue]) async -> Result<QueryResult, PostgresError> {
        do {
            return .success(try await retryingUnrun { try await withPooledConnection { try await $0.query(sql, values: values, marked: true) } })
        } catch {
            return .failure(error as? PostgresError ?? PostgresError(.server, "\(error)"))
        }
    }
}
