/// Whether reads may start: a row must be read after the feed listens, or a change committed
/// in between would never be announced to it. A plain value, kept under the repository's lock.
///
/// The gate opens when the feed listens. It also opens — so that no read stalls — when the feed
/// fails to connect (a full server, a server not up yet) or after one shared deadline: reads
/// then go ahead, and when the feed does listen, everything live is re-read.
struct ListeningGate {
    enum State {
        /// Nobody has waited yet.
        case closed
        /// Reads wait, until `deadline` at the latest.
        case waiting(deadline: ContinuousClock.Instant)
        /// The feed listens.
        case listening
        /// Reads go ahead without the feed; it must re-read everything once it listens.
        case openWithoutFeed
    }

    private(set) var state = State.closed
    private var waiters: [Int: CheckedContinuation<Void, any Error>] = [:]

    var isOpen: Bool {
        switch state {
        case .listening, .openWithoutFeed: true
        case .closed, .waiting: false
        }
    }

    /// A read wants to start: true when it may now; otherwise it waits as `id` (and the caller
    /// must arm the shared deadline when `armDeadline` says so).
    mutating func enter(_ id: Int, _ continuation: CheckedContinuation<Void, any Error>,
                        timeout: Duration) -> (mayStart: Bool, armDeadline: ContinuousClock.Instant?) {
        switch state {
        case .listening, .openWithoutFeed:
            return (true, nil)
        case .waiting:
            waiters[id] = continuation
            return (false, nil)
        case .closed:
            let deadline = ContinuousClock.now + timeout
            state = .waiting(deadline: deadline)
            waiters[id] = continuation
            return (false, deadline)
        }
    }

    /// How many reads wait.
    var waiterCount: Int { waiters.count }

    /// The waiting read `id` was cancelled: its continuation, to resume with the cancellation.
    mutating func leave(_ id: Int) -> CheckedContinuation<Void, any Error>? {
        waiters.removeValue(forKey: id)
    }

    /// The feed listens. Returns the reads to let go, and whether reads already went ahead
    /// without it (then everything live must be re-read).
    mutating func feedListens() -> (release: [CheckedContinuation<Void, any Error>], mustResync: Bool) {
        let wentAhead = if case .openWithoutFeed = state { true } else { false }
        state = .listening
        return (takeWaiters(), wentAhead)
    }

    /// The feed could not connect, or the shared deadline passed: reads go ahead.
    mutating func giveUpWaiting() -> [CheckedContinuation<Void, any Error>] {
        if case .listening = state { return [] }
        state = .openWithoutFeed
        return takeWaiters()
    }

    private mutating func takeWaiters() -> [CheckedContinuation<Void, any Error>] {
        defer { waiters.removeAll() }
        return Array(waiters.values)
    }
}
