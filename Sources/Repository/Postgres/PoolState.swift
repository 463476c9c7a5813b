/// The pool's bookkeeping, only ever touched under its lock.
struct PoolState {
    struct Waiter {
        let id: Int
        let continuation: CheckedContinuation<Connection?, any Error>
    }

    enum CheckOut {
        /// Fail with this error, or with `CancellationError` when nil.
        case use(Connection), open, wait, fail((any Error)?)
    }

    enum CheckIn {
        /// Resume this waiter with the connection, or with nil: "open one yourself".
        case toWaiter(CheckedContinuation<Connection?, any Error>, Connection?)
        case none
    }

    /// Idle connections, the most recently used last.
    var idle: [(connection: Connection, since: ContinuousClock.Instant)] = []
    var openCount = 0
    /// Of ``openCount``, the slots given to tasks to open a connection in, not yet opened.
    private(set) var opening = 0
    /// Whether the last attempt to open a connection was refused. Until one succeeds, one task
    /// at a time tries: a new backend counts those being opened beside it against the server's
    /// limit, so several tried together can all be refused where there was room for one.
    private(set) var refused = false

    /// Whether a task may open a connection in a free slot now.
    private func mayOpen(limit: Int) -> Bool {
        openCount < limit && !(refused && opening > 0)
    }
    var waiters: [Waiter] = []
    var nextWaiterID = 0
    var isClosed = false

    /// The most recently used idle connection, after closing those idle for longer than `idleTimeout`.
    mutating func takeIdle(idleTimeout: Duration) -> Connection? {
        dropExpired(idleTimeout: idleTimeout)
        return idle.popLast()?.connection
    }

    /// Closes the connections idle for longer than `idleTimeout`; how many.
    @discardableResult
    mutating func dropExpired(idleTimeout: Duration) -> Int {
        let now = ContinuousClock.now
        let expired = idle.prefix { now - $0.since > idleTimeout }.count
        if expired > 0 {
            // No task waits while connections are idle, so no waiter needs the freed slots.
            idle.removeFirst(expired)
            openCount -= expired
        }
        return expired
    }

    /// Drops every idle connection (they close when released).
    mutating func dropIdle() {
        openCount -= idle.count
        idle.removeAll()
    }

    mutating func checkOut(_ id: Int, _ continuation: CheckedContinuation<Connection?, any Error>, limit: Int) -> CheckOut {
        if isClosed { return .fail(PostgresError(.closed, "the database pool is closed")) }
        if let connection = idle.popLast()?.connection { return .use(connection) }
        if mayOpen(limit: limit) {
            openCount += 1
            opening += 1
            return .open
        }
        // Cancellation sets the flag before running the cancel handler, which takes this lock:
        // checking here means a waiter cancelled before it queued is never left behind.
        if Task.isCancelled { return .fail(nil) }
        waiters.append(Waiter(id: id, continuation: continuation))
        return .wait
    }

    mutating func checkIn(_ connection: Connection?) -> CheckIn {
        guard let connection, !isClosed else {
            // Broken or closing: the connection goes, its slot frees up.
            openCount -= 1
            return returnSlotToWaiter()
        }
        if !waiters.isEmpty { return .toWaiter(waiters.removeFirst().continuation, connection) }
        idle.append((connection, ContinuousClock.now))
        return .none
    }

    /// Opening a connection in a slot reserved by ``checkOut(_:_:limit:)`` (or
    /// ``retryOpen(_:limit:)``) failed: the slot frees up. When `retry` says the task tries
    /// again, it takes an idle connection or queues — for one handed back, or for a slot to try
    /// in once its back-off ends; no other waiter is told to open one. Else it fails with the
    /// error, and the slot goes to the first waiter, to try for itself.
    mutating func openFailed(_ id: Int, _ continuation: CheckedContinuation<Connection?, any Error>, retry: OpenRetry,
                             deadline: Duration) -> (CheckOut, opener: CheckedContinuation<Connection?, any Error>?) {
        openCount -= 1
        opening -= 1
        refused = true
        if isClosed { return (.fail(PostgresError(.closed, "the database pool is closed")), nil) }
        if let connection = idle.popLast()?.connection { return (.use(connection), nil) }
        // The slot goes to the first waiter, to try for itself.
        func fail(_ error: (any Error)?) -> (CheckOut, opener: CheckedContinuation<Connection?, any Error>?) {
            guard case .toWaiter(let opener, _) = returnSlotToWaiter() else { return (.fail(error), nil) }
            return (.fail(error), opener)
        }
        guard retry.waits(othersOpen: openCount - opening > 0, deadline: deadline) else { return fail(retry.error) }
        if Task.isCancelled { return fail(nil) }
        waiters.append(Waiter(id: id, continuation: continuation))
        return (.wait, nil)
    }

    /// A connection was opened in a slot given to open one in. After a refusal, the next
    /// waiter (if a slot is free) may now try: returned, to be resumed with nil.
    mutating func opened(limit: Int) -> CheckedContinuation<Connection?, any Error>? {
        opening -= 1
        guard refused else { return nil }
        refused = false
        guard openCount < limit, case .toWaiter(let opener, _) = returnSlotToWaiter() else { return nil }
        return opener
    }

    /// The back-off of waiter `id` ended: if it still waits and may open a connection, it takes
    /// a slot to open one in (its continuation, to resume with nil). `waiting`: whether it still
    /// waits — for a connection handed back, or for the task opening one now to finish.
    mutating func retryOpen(_ id: Int, limit: Int) -> (opener: CheckedContinuation<Connection?, any Error>?, waiting: Bool) {
        guard !isClosed, let index = waiters.firstIndex(where: { $0.id == id }) else { return (nil, false) }
        guard mayOpen(limit: limit) else { return (nil, true) }
        openCount += 1
        opening += 1
        return (waiters.remove(at: index).continuation, false)
    }

    /// A slot freed up: the first waiter takes it, to open a connection in — unless, after a
    /// refusal, another task is opening one (its outcome wakes the first waiter).
    private mutating func returnSlotToWaiter() -> CheckIn {
        guard !isClosed, !waiters.isEmpty, !(refused && opening > 0) else { return .none }
        openCount += 1
        opening += 1
        return .toWaiter(waiters.removeFirst().continuation, nil)
    }

    /// Waiter `id` stopped waiting (its task was cancelled): its continuation, and — with a slot
    /// free (a refused task waited without one) — the next waiter, to open a connection in it.
    mutating func removeWaiter(_ id: Int, limit: Int) -> (removed: CheckedContinuation<Connection?, any Error>?,
                                                          opener: CheckedContinuation<Connection?, any Error>?) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return (nil, nil) }
        let removed = waiters.remove(at: index).continuation
        guard openCount < limit, case .toWaiter(let opener, _) = returnSlotToWaiter() else { return (removed, nil) }
        return (removed, opener)
    }
}
