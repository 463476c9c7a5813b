/// A task's failed attempts to open a pooled connection, and when it may try again.
///
/// A server at its connection limit (`max_connections`, or a role's or database's
/// `CONNECTION LIMIT`) refuses new connections for as long as others are open — and its
/// limit check is approximate by design: connections opened at the same moment may all be
/// refused where there was room for one, and a refused backend counts until it has exited. So a
/// refused task tries again: for a second since its first refusal, whatever else is open; and
/// while the pool holds other connections (not counting those still being opened), waiting
/// meanwhile for one of those to be handed back — for as long as the pool hands connections back,
/// and for up to the connect timeout once none has been (its holders may be waiting for this
/// very task). Then it fails with the server's reason — at once when the server refused it for
/// a reason that would not change (a wrong password, a database that does not exist).
struct OpenRetry {
    /// When the first attempt failed.
    let since: ContinuousClock.Instant
    /// Attempts made so far, all failed.
    private(set) var tries = 1
    /// The last attempt's error.
    private(set) var error: any Error
    /// The pool's count of connections handed back, as last seen, and when it was seen to move.
    private(set) var handedBack: UInt64
    private(set) var movedAt: ContinuousClock.Instant

    /// How long after its first refusal a task tries again whatever else is open.
    static let quickWindow: Duration = .seconds(1)

    init(_ error: any Error, handedBack: UInt64 = 0, at now: ContinuousClock.Instant = .now) {
        (since, self.error, self.handedBack, movedAt) = (now, error, handedBack, now)
    }

    /// The pool has handed back `count` connections in all, as seen `now`.
    mutating func saw(handedBack count: UInt64, now: ContinuousClock.Instant = .now) {
        guard count != handedBack else { return }
        (handedBack, movedAt) = (count, now)
    }

    /// Another attempt failed with `error`.
    mutating func failed(_ error: any Error) {
        tries += 1
        self.error = error
    }

    /// Whether the task waits and tries again, or fails now: `othersOpen` whether the pool holds
    /// other connections; `deadline` how long it may go on while none is handed back. A refusal
    /// that would come again (a wrong password: see ``ConnectFailure/isWorthRetrying(_:)``) fails now.
    func waits(othersOpen: Bool, deadline: Duration, now: ContinuousClock.Instant = .now) -> Bool {
        guard ConnectFailure.isWorthRetrying(error) else { return false }
        return now - since < Self.quickWindow || (othersOpen && now - movedAt < deadline)
    }

    /// How long to wait before the next attempt (unless a connection is handed back first):
    /// 25 ms, doubling to at most 1 s, spread by ±50% so that refused tasks do not come back together.
    var backOff: Duration {
        let base = min(25.0 * Double(1 << min(tries - 1, 6)), 1000)
        return .milliseconds(base * Double.random(in: 0.5...1.5))
    }
}
