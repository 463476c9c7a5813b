/// When a repository reads everything live again after a re-read failed.
///
/// A re-read that fails (a lost pooled connection, a statement timeout, a privilege revoked
/// for a while) leaves its rows and queries as they were, and nothing else would read them
/// until their rows change again. So a failure schedules a repair: once its delay is over,
/// every live row and query is read again, as after a reconnection. While repairs keep failing,
/// each waits twice as long as the one before, up to ``limit``; a re-read that succeeds starts
/// over from ``first``. Failures while a repair is scheduled join it.
struct RereadRepair: Sendable, Equatable {
    /// The delay before the first repair of a series.
    var first: Duration = .milliseconds(100)
    /// The longest delay.
    var limit: Duration = .seconds(30)
    /// Repairs scheduled since a re-read last succeeded.
    private(set) var attempts = 0
    /// Whether a repair waits for its delay.
    private(set) var isScheduled = false

    /// A re-read failed: the delay until the repair to schedule, or nil when one is scheduled.
    mutating func readFailed() -> Duration? {
        guard !isScheduled else { return nil }
        isScheduled = true
        attempts += 1
        var delay = first
        for _ in 1..<attempts where delay < limit { delay *= 2 }
        return min(delay, limit)
    }

    /// The scheduled repair starts: a failure from now on schedules the next one.
    mutating func repairStarts() {
        isScheduled = false
    }

    /// A re-read succeeded: the next failure's repair waits ``first`` again.
    mutating func readSucceeded() {
        attempts = 0
    }
}
