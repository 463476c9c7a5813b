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

    /// A waiter a transition resumes: with a connection, with nil ("open one yourself"), or with an error.
    typealias Resumption = (continuation: CheckedContinuation<Connection?, any Error>, outcome: Result<Connection?, any Error>)

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
    /// How many connections have been handed back in all: whether the pool makes progress.
    private(set) var handedBack: UInt64 = 0

    /// Whether a task may open a connection in a free slot now: not while another opens one
    /// after a refusal, nor while the pool holds none yet (a cold pool's burst would crowd a
    /// server near its limit with attempts of its own, all refused where one would pass).
    private func mayOpen(limit: Int) -> Bool {
        openCount < limit && !(opening > 0 && (refused || openCount == opening))
    }
    var waiters: [Waiter] = []
    var nextWaiterID = 0
    var isClosed = false

    /// The most recently used idle connection, after closing those idle for longer than `idleTimeout`.
    mutating func takeIdle(idleTimeout: Duration) -> Connection? {
        dropExpired(idleTimeout: idleTimeout)
        return takeMostRecent()
    }

    /// The most recently used idle connection, taken out of the pool: statements run on it again.
    private mutating func takeMostRecent() -> Connection? {
        guard let connection = idle.popLast()?.connection else { return nil }
        connection.isIdleInPool.store(false, ordering: .relaxed)
        return connection
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

    /// A task asks for a connection: an idle one, a slot to open one in — one at a time while
    /// the pool holds none yet, or after a refusal (see ``mayOpen(limit:)``) — or a place in the queue.
    mutating func checkOut(_ id: Int, _ continuation: CheckedContinuation<Connection?, any Error>, limit: Int) -> CheckOut {
        if isClosed { return .fail(PostgresError(.closed, "the database pool is closed")) }
        if let connection = takeMostRecent() { return .use(connection) }
        // Cancellation sets the flag before running the cancel handler, which takes this lock:
        // checking here means a waiter cancelled before it queued is never left behind (nor
        // does a cancelled task open a connection, to fail).
        if Task.isCancelled { return .fail(nil) }
        if mayOpen(limit: limit) {
            openCount += 1
            opening += 1
            return .open
        }
        waiters.append(Waiter(id: id, continuation: continuation))
        return .wait
    }

    mutating func checkIn(_ connection: Connection?) -> CheckIn {
        guard let connection, !isClosed else {
            // Broken or closing: the connection goes, its slot frees up.
            openCount -= 1
            return returnSlotToWaiter()
        }
        handedBack &+= 1
        if !waiters.isEmpty { return .toWaiter(waiters.removeFirst().continuation, connection) }
        connection.isIdleInPool.store(true, ordering: .relaxed)
        idle.append((connection, ContinuousClock.now))
        return .none
    }

    /// Opening a connection in a slot reserved by ``checkOut(_:_:limit:)`` (or
    /// ``retryOpen(_:limit:)``) failed: the slot frees up. When `retry` says the task tries
    /// again, it takes an idle connection or queues — for one handed back, or for a slot to try
    /// in once its back-off ends; no other waiter is told to open one. Else it fails with the
    /// error, and the slot goes to the first waiter, to try for itself — or, with nothing held
    /// or being opened, every waiter fails with it too. Returns the waiters to resume.
    mutating func openFailed(_ id: Int, _ continuation: CheckedContinuation<Connection?, any Error>, retry: inout OpenRetry,
                             deadline: Duration) -> (CheckOut, [Resumption]) {
        retry.saw(handedBack: handedBack)
        openCount -= 1
        opening -= 1
        if !(retry.error is CancellationError) { refused = true }
        if isClosed { return (.fail(PostgresError(.closed, "the database pool is closed")), []) }
        if let connection = takeMostRecent() { return (.use(connection), []) }
        if Task.isCancelled { return (.fail(nil), slotToWaiter()) }
        guard retry.waits(othersOpen: openCount - opening > 0, deadline: deadline) else {
            // Nothing held, nothing being opened: the waiters would meet the same refusal, one
            // after another; they fail with it now. Else the slot goes to the first, to try.
            guard openCount == 0 else { return (.fail(retry.error), slotToWaiter()) }
            defer { waiters.removeAll() }
            return (.fail(retry.error), waiters.map { ($0.continuation, .failure(retry.error)) })
        }
        waiters.append(Waiter(id: id, continuation: continuation))
        return (.wait, [])
    }

    /// A connection was opened in a slot given to open one in. Waiters held back meanwhile (a
    /// cold pool, or after a refusal) may now open theirs, one per free slot: returned, to be
    /// resumed with nil.
    mutating func opened(limit: Int) -> [Resumption] {
        opening -= 1
        refused = false
        var openers: [Resumption] = []
        while openCount < limit, case .toWaiter(let opener, _) = returnSlotToWaiter() { openers.append((opener, .success(nil))) }
        return openers
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
        guard !isClosed, !waiters.isEmpty, !(opening > 0 && (refused || openCount == opening)) else { return .none }
        openCount += 1
        opening += 1
        return .toWaiter(waiters.removeFirst().continuation, nil)
    }

    /// Waiter `id` stopped waiting (its task was cancelled): its continuation, and — with a slot
    /// free (a refused task waited without one) — the next waiter, to open a connection in it.
    mutating func removeWaiter(_ id: Int, limit: Int) -> (removed: CheckedContinuation<Connection?, any Error>?, openers: [Resumption]) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return (nil, []) }
        let removed = waiters.remove(at: index).continuation
        return (removed, openCount < limit ? slotToWaiter() : [])
    }

    /// A free slot to the first waiter, to open a connection in (see ``returnSlotToWaiter()``).
    private mutating func slotToWaiter() -> [Resumption] {
        guard case .toWaiter(let opener, _) = returnSlotToWaiter() else { return [] }
        return [(opener, .success(nil))]
    }
}
