/// When a repository reads everything live again after a re-read failed.
///
/// A re-read that fails for a reason that can pass (``mayPass(after:)``: a lost pooled
/// connection, a statement timeout, a privilege revoked for a while) leaves its rows and queries
/// as they were, and nothing else would read them until their rows change again. So the failure
/// schedules a repair: once its delay is over, every live row and query is read again, as after
/// a reconnection. While repairs keep failing, each waits twice as long as the one before, up to
/// ``limit``; a failure more than twice the last delay after the last repair was scheduled (so
/// the repair had time to succeed) starts a new series from ``first``. Failures while a repair
/// is scheduled join it.
struct RereadRepair: Sendable {
    /// The delay before the first repair of a series.
    var first: Duration = .milliseconds(100)
    /// The longest delay.
    var limit: Duration = .seconds(30)
    /// Repairs scheduled in this series.
    private(set) var attempts = 0
    /// Whether a repair waits for its delay.
    private(set) var isScheduled = false
    /// When the last repair was scheduled, and its delay.
    private var last: (at: ContinuousClock.Instant, delay: Duration)?

    /// A re-read failed at `now`: the delay until the repair to schedule, or nil when one is
    /// scheduled already.
    mutating func readFailed(at now: ContinuousClock.Instant = .now) -> Duration? {
        guard !isScheduled else { return nil }
        if let last, now - last.at > last.delay * 2 { attempts = 0 }
        isScheduled = true
        attempts += 1
        let delay = delay(ofAttempt: attempts)
        last = (now, delay)
        return delay
    }

    /// The delay before repair number `attempt` (from 1) of a series.
    func delay(ofAttempt attempt: Int) -> Duration {
        var delay = first
        for _ in 1..<max(attempt, 1) where delay < limit { delay *= 2 }
        return min(delay, limit)
    }

    /// The scheduled repair starts: a failure from now on schedules the next one.
    mutating func repairStarts() {
        isScheduled = false
    }

    /// Whether reading again may succeed where `error` failed: a connection lost or refused,
    /// a statement cancelled or timed out, a server short of resources, a privilege missing, a
    /// serialization failure or deadlock, a lock not available, a table, column or schema missing
    /// (a migration under way, or a database being re-created, which makes them again). Not a row
    /// that cannot be decoded, nor a data error in a query's condition: reading again fails the
    /// same way.
    static func mayPass(after error: any Error) -> Bool {
        guard let error = error as? PostgresError else { return false }
        switch error.kind {
        case .connectionFailed, .connectionLost:
            return true
        case .server:
            guard let state = error.sqlState else { return false }
            return ["08", "40", "53", "57", "58"].contains(String(state.prefix(2))) || Self.passingStates.contains(state)
        default:  // configuration, parameters, statements, a closed pool: the same again
            return false
        }
    }

    /// SQLSTATEs outside the repaired classes that can pass: a privilege missing (`42501`), a
    /// lock not available (`55P03`, `55006`), and what a migration under way or a re-created
    /// database shows for a while — no such table (`42P01`), column (`42703`) or schema
    /// (`3F000`). A name that never comes is read again at most every ``limit``.
    private static let passingStates: Set<String> = ["42501", "55P03", "55006", "42P01", "42703", "3F000"]
}
