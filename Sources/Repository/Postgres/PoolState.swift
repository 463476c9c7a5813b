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
        if openCount < limit {
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

    /// A connection was opened in a slot given to open one in.
    mutating func opened() {
        opening -= 1
    }

    /// The back-off of waiter `id` ended: if it still waits and a slot is free, it takes the
    /// slot, to open a connection in (resumed with nil). At the limit it waits on, for one handed back.
    mutating func retryOpen(_ id: Int, limit: Int) -> CheckedContinuation<Connection?, any Error>? {
        guard !isClosed, openCount < limit, let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
        openCount += 1
        opening += 1
        return waiters.remove(at: index).continuation
    }

    private mutating func returnSlotToWaiter() -> CheckIn {
        guard !isClosed, !waiters.isEmpty else { return .none }
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
