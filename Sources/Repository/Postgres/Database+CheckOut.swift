extension Database {
    /// A connection of the pool, newly opened or one the server has not ended while it sat
    /// idle (``IdleCheck``: no round trip); return it with ``release(_:)``.
    func acquire() async throws -> Connection {
        while true {
            let (connection, isNew) = try await checkOut()
            // Not reusable while idle: a statement run on it outside a checkout dropped it
            // (its socket's number may belong to another connection by now, and look open).
            if isNew || (connection.isReusable.load(ordering: .relaxed) && connection.idleCheck.looksOpen) { return connection }
            logger.debug("dropped an idle connection the server had closed", metadata: ["server": "\(configuration)"])
            connection.isReusable.store(false, ordering: .relaxed)
            release(connection)
        }
    }

    /// A pooled connection, or one opened in a free slot (`isNew`). An open the server refuses
    /// is tried again as ``OpenRetry`` says, the task waiting meanwhile for a connection handed back.
    private func checkOut() async throws -> (connection: Connection, isNew: Bool) {
        // Fast path: an idle connection, with no continuation or cancellation handler.
        if let idle = pool.withLock({ $0.isClosed ? nil : $0.takeIdle(idleTimeout: idleTimeout) }) {
            recordPool()
            return (idle, false)
        }
        try refuseSelfDeadlock()
        let start = ContinuousClock.now
        defer {
            metrics.waitTime.recordSince(start)
            recordPool()
        }
        let (limit, deadline) = (maximumConnections, Duration.seconds(configuration.connectTimeoutInEffect))
        var retry: OpenRetry?
        while true {
            let granted = try await turn(retryAfter: retry?.backOff) { state, id, continuation in
                guard var seen = retry else { return (state.checkOut(id, continuation, limit: limit), []) }
                defer { retry = seen }
                return state.openFailed(id, continuation, retry: &seen, deadline: deadline)
            }
            if let granted { return (granted, false) }
            do {
                let connection = try await Connection.connect(configuration, poller: .shared, types: types)
                for (waiter, outcome) in pool.withLock({ $0.opened(limit: limit) }) { waiter.resume(with: outcome) }
                return (connection, true)
            } catch {
                if retry == nil { retry = OpenRetry(error, handedBack: pool.withLock { $0.handedBack }) } else { retry?.failed(error) }
                logger.debug("opening a pooled connection failed", metadata: ["error": "\(error)", "server": "\(configuration)"])
            }
        }
    }

    /// Queues for a connection as `decide` says (under the pool's lock): one handed over, or
    /// nil for a free slot to open one in. A task queued after a failed open is given a slot
    /// once `retryAfter` has passed, if one is free. Cancelling the task stops the wait.
    private func turn(retryAfter backOff: Duration?,
                      _ decide: (inout PoolState, Int, CheckedContinuation<Connection?, any Error>)
                          -> (PoolState.CheckOut, [PoolState.Resumption])) async throws -> Connection? {
        let id = pool.withLock { state in state.nextWaiterID += 1; return state.nextWaiterID }
        // Started once the task is queued: a timer that fired before would find no one to give a slot.
        // Its own lock, taken alone (never while the pool's is held).
        let retrying = Locked<Task<Void, Never>?>(nil)
        defer { retrying.withLock { $0?.cancel() } }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let (decision, others) = pool.withLock { state in decide(&state, id, continuation) }
                for (waiter, outcome) in others { waiter.resume(with: outcome) }
                switch decision {
                case .use(let connection): continuation.resume(returning: connection)
                case .open: continuation.resume(returning: nil)
                case .fail(let error): continuation.resume(throwing: error ?? CancellationError())
                case .wait:
                    guard let backOff else { break }
                    // A loose task, not a transition: the back-off must run while this task is
                    // suspended. It takes only the pool's lock, with no other lock held, and is
                    // cancelled when `turn` returns (the `defer` above).
                    let timer = Task { [pool, maximumConnections] in
                        // Again while another task is opening one, each wait twice as long, to 1 s.
                        var wait = backOff
                        while (try? await Task.sleep(for: wait)) != nil {
                            let (opener, waiting) = pool.withLock { $0.retryOpen(id, limit: maximumConnections) }
                            opener?.resume(returning: nil)
                            if !waiting { return }
                            wait = min(wait * 2, .seconds(1))
                        }
                    }
                    retrying.withLock { $0 = timer }
                }
            }
        } onCancel: {
            let (removed, openers) = pool.withLock { $0.removeWaiter(id, limit: maximumConnections) }
            removed?.resume(throwing: CancellationError())
            for (waiter, outcome) in openers { waiter.resume(with: outcome) }
        }
    }

    func release(_ connection: Connection) {
        let reusable = connection.isReusable.load(ordering: .relaxed)
        let lost = connection.wasLost.load(ordering: .relaxed)
        let handOff = pool.withLock { state in
            // A lost connection: the idle ones were most likely lost with it (a restart).
            if lost { state.dropIdle() }
            return state.checkIn(reusable ? connection : nil)
        }
        if lost { logger.info("a pooled connection was lost; dropped the idle ones", metadata: ["server": "\(configuration)"]) }
        recordPool()
        switch handOff {
        case .toWaiter(let waiter, let connection): waiter.resume(returning: connection)
        case .none: break
        }
    }
}
