/// What a live repository knows of its change feed, as one value behind one lock
/// (`LiveRepository.feedState`): whether the feed listens (reads wait at its ``ListeningGate``),
/// whether a re-read failed since the feed last resumed, the repair of failed re-reads
/// (``RereadRepair``), and the stores waiting for the pool's worker to read them again.
///
/// Its methods are the transitions, each taken under the lock; what they return — waiters to
/// resume, whether to read everything again, a repair to schedule, a batch to read — is done by
/// the repository once the lock is released. Nothing else is taken while it is held.
struct FeedState {
    private(set) var gate = ListeningGate()
    private var lastWaiter = 0
    /// Whether a re-read failed since the feed last (re)connected: a feed that resumes must then
    /// re-read everything after all, since the changes it confirmed were not all applied.
    private(set) var readFailed = false
    private(set) var repair = RereadRepair()
    /// Stores to read again, by identity, and whether the worker that reads them runs.
    private var stale: [ObjectIdentifier: any AnyLiveStore] = [:]
    private(set) var isRefreshing = false

    /// What a change of the feed's connection asks of the repository.
    struct Step {
        /// Reads waiting for the feed, to resume.
        var release: [CheckedContinuation<Void, any Error>] = []
        /// Whether every live row must be read again and every live query run again.
        var resyncEverything = false
    }

    /// A repair of failed re-reads, to start after `delay`: the `attempt`th of a series, and
    /// whether its delay just reached the longest.
    struct Repair: Equatable {
        let delay: Duration
        let attempt: Int
        let reachesLimit: Bool
    }

    // MARK: - Reads waiting for the feed

    /// A new waiter's number.
    mutating func nextWaiter() -> Int {
        lastWaiter += 1
        return lastWaiter
    }

    /// See ``ListeningGate/enter(_:_:timeout:)``.
    mutating func enter(_ id: Int, _ continuation: CheckedContinuation<Void, any Error>,
                        timeout: Duration) -> (mayStart: Bool, armDeadline: ContinuousClock.Instant?) {
        gate.enter(id, continuation, timeout: timeout)
    }

    /// See ``ListeningGate/leave(_:)``.
    mutating func leave(_ id: Int) -> CheckedContinuation<Void, any Error>? {
        gate.leave(id)
    }

    /// How many reads wait at the gate.
    var gateWaiters: Int { gate.waiterCount }

    /// Reads stop waiting for a feed that has not connected (its deadline passed, or it failed).
    mutating func giveUpWaiting() -> [CheckedContinuation<Void, any Error>] {
        gate.giveUpWaiting()
    }

    // MARK: - The feed's connection

    /// The feed connected, or resumed where it was: reads may start. Everything is read again
    /// if reads went ahead without it, or — after an outage the feed resumed from — if a
    /// re-read failed meanwhile (the changes it confirmed were not all applied).
    mutating func feedListens(resumed: Bool = false) -> Step {
        let (release, wentAhead) = gate.feedListens()
        let failedMeanwhile = resumed && readFailed
        if resumed { readFailed = false }
        return Step(release: release, resyncEverything: wentAhead || failedMeanwhile)
    }

    /// The feed connected again after an outage it could not resume from: everything is read again.
    mutating func feedReconnected() -> Step {
        readFailed = false
        var step = feedListens()
        step.resyncEverything = true
        return step
    }

    // MARK: - Failed re-reads

    /// A re-read failed; one that may pass if tried again (`repairable`) schedules a repair,
    /// unless one is scheduled already.
    mutating func rereadFailed(repairable: Bool, at now: ContinuousClock.Instant = .now) -> Repair? {
        readFailed = true
        guard repairable, let delay = repair.readFailed(at: now) else { return nil }
        let reachesLimit = delay == repair.limit && repair.delay(ofAttempt: repair.attempts - 1) < repair.limit
        return Repair(delay: delay, attempt: repair.attempts, reachesLimit: reachesLimit)
    }

    /// The scheduled repair starts: its reads count from now.
    mutating func repairStarts() {
        repair.repairStarts()
        readFailed = false
    }

    // MARK: - The refresh worker

    /// Adds `stores` to those to read again: whether a worker must start to read them.
    mutating func markStale(_ stores: [any AnyLiveStore]) -> Bool {
        guard !stores.isEmpty else { return false }
        for store in stores { stale[ObjectIdentifier(store)] = store }
        defer { isRefreshing = true }
        return !isRefreshing
    }

    /// The worker's next batch: every store marked since its last; nil when none is left, and
    /// the worker ends.
    mutating func nextStaleBatch() -> [any AnyLiveStore]? {
        guard !stale.isEmpty else {
            isRefreshing = false
            return nil
        }
        defer { stale.removeAll() }
        return Array(stale.values)
    }
}
