/// Keeps a flood of malformed or forged notifications from flooding the log: the first of each
/// five-second window is logged as it comes, the rest are counted and summarised in one line
/// when the window has passed. A plain value, used on the feed's thread.
struct IgnoredNotifications {
    static let window: Duration = .seconds(5)

    private var windowStart: ContinuousClock.Instant?
    private var first: String?
    private var more = 0

    /// A line to log: a message, and its details as metadata (escaped for terminals).
    struct Line: Equatable {
        var message: String
        var metadata: [String: String]
    }

    /// Records one; returns the lines to log now.
    mutating func record(payload: String, reason: String, at now: ContinuousClock.Instant = .now) -> [Line] {
        let summary = flush(at: now)
        let description = "\(TerminalText.escaped(payload, limit: 120)) (\(reason))"
        guard windowStart != nil else {
            windowStart = now
            first = description
            return summary + [Line(message: "ignored a notification that is not a change announcement", metadata: ["payload": description])]
        }
        more += 1
        return summary
    }

    /// The summary of a window that has passed, if it counted any; starts a new window.
    mutating func flush(at now: ContinuousClock.Instant = .now) -> [Line] {
        guard let start = windowStart, now - start >= Self.window else { return [] }
        defer { (windowStart, first, more) = (nil, nil, 0) }
        guard more > 0, let first else { return [] }
        return [Line(message: "ignored more notifications that are not change announcements",
                     metadata: ["count": "\(more)", "seconds": "\(Self.window.components.seconds)", "first": first])]
    }
}
