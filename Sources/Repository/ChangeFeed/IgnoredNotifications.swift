/// Keeps a flood of malformed or forged notifications from flooding the log: the first of each
/// five-second window is logged as it comes, the rest are counted and summarised in one line
/// when the window has passed. A plain value, used on the feed's thread.
struct IgnoredNotifications {
    static let window: Duration = .seconds(5)

    private var windowStart: ContinuousClock.Instant?
    private var first: String?
    private var more = 0

    /// Records one; returns a line to log now, if any.
    mutating func record(payload: String, reason: String, at now: ContinuousClock.Instant = .now) -> String? {
        let summary = flush(at: now)
        let description = "\(TerminalText.escaped(payload, limit: 120)) (\(reason))"
        guard windowStart != nil else {
            windowStart = now
            first = description
            return [summary, "ignored a notification: \(description)"].compactMap { $0 }.joined(separator: "\n")
        }
        more += 1
        return summary
    }

    /// The summary of a window that has passed, if it counted any; starts a new window.
    mutating func flush(at now: ContinuousClock.Instant = .now) -> String? {
        guard let start = windowStart, now - start >= Self.window else { return nil }
        defer { (windowStart, first, more) = (nil, nil, 0) }
        guard more > 0, let first else { return nil }
        return "ignored \(more.formatted()) more malformed notifications in the last \(Self.window.components.seconds) s; the first: \(first)"
    }
}
