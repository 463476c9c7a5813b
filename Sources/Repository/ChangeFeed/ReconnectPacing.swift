/// When the change feed opens its next session after a failure — plain state, kept by the feed's
/// thread; each method is one transition.
///
/// After a session that ran for a while, at once: an outage (a server restart, a cut
/// connection) costs no more than the reconnection, however often it happens. After a session
/// that could not be opened, that the server refused soon after it opened (it accepts the
/// connection and then refuses the stream, every time), or whose connection was lost almost as
/// soon as it opened (ended on sight, every time), after a pause that doubles up to `maximum`,
/// so that a lasting fault is tried again now and then instead of in a tight loop.
struct ReconnectPacing {
    /// The first pause.
    let initial: Duration
    /// The longest pause.
    let maximum: Duration
    /// How long a session must have run for the server's refusal of it to be taken for an
    /// outage rather than a fault of the session itself.
    let settled: Duration
    /// How long a session must have run for the loss of its connection to be taken for an
    /// outage: much less than `settled` — a cut connection is followed at once even when the
    /// session before it was cut too, a moment earlier.
    let quickLoss: Duration
    /// The pause before the next try, when one is due.
    private(set) var pause: Duration
    private var openedAt: ContinuousClock.Instant?

    init(initial: Duration = .milliseconds(100), maximum: Duration, settled: Duration = .seconds(1), quickLoss: Duration = .milliseconds(50)) {
        self.initial = initial
        self.maximum = max(initial, maximum)
        self.settled = settled
        self.quickLoss = min(quickLoss, settled)
        pause = initial
    }

    /// A session opened at `now`.
    mutating func opened(at now: ContinuousClock.Instant) {
        openedAt = now
    }

    /// A session could not be opened: the pause before the next try.
    mutating func openFailed() -> Duration {
        defer { pause = min(pause * 2, maximum) }
        return pause
    }

    /// The open session ended at `now` — `refused` by the server, or its connection lost: the
    /// pause before the next one (zero: at once).
    mutating func ended(at now: ContinuousClock.Instant, refused: Bool) -> Duration {
        defer { openedAt = nil }
        guard let openedAt, now - openedAt < (refused ? settled : quickLoss) else {
            pause = initial
            return .zero
        }
        return openFailed()
    }
}
