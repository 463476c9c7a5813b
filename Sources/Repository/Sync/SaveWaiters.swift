/// The `save()` calls of one live store between enrolling (their edits counted) and returning —
/// plain state, kept under one lock by ``LiveStore``; each method is one transition.
///
/// A call is resumed exactly once: at once when its edits were settled before it waited, when
/// the sync state wakes it, or when its task is cancelled — whichever comes first. `Waiter` is
/// what resumes it (a continuation; anything in tests).
@usableFromInline
struct SaveWaiters<Waiter> {
    private enum Entry {
        case enrolled
        case waiting(Waiter)
        /// Woken before it waited: nil, or the failure to throw.
        case woken((any Error)?)
    }

    private var next = 0
    private var entries: [Int: Entry] = [:]

    /// How many calls are between enrolling and returning (for tests).
    var count: Int { entries.count }

    /// A new call: its ticket.
    mutating func enrol() -> Int {
        next += 1
        entries[next] = .enrolled
        return next
    }

    /// The call `ticket` waits with `waiter`: nil when it is parked; otherwise what to resume it
    /// with now — `.some(nil)` to return, `.some(error)` to throw (a `CancellationError` when it
    /// was cancelled before it waited).
    /// Whether the edits counted by `ticket` are not settled yet: a ``park(_:_:)`` now would wait.
    func isUnsettled(_ ticket: Int) -> Bool {
        if case .enrolled? = entries[ticket] { return true }
        return false
    }

    mutating func park(_ ticket: Int, _ waiter: Waiter) -> (any Error)?? {
        switch entries[ticket] {
        case .enrolled?:
            entries[ticket] = .waiting(waiter)
            return .none
        case .woken(let failure)?:
            entries[ticket] = nil
            return .some(failure)
        case .waiting?, nil:
            return .some(CancellationError())
        }
    }

    /// The call `ticket` is cancelled: whether it had not returned yet (the sync state must then
    /// forget it), and the waiter to resume with `CancellationError`, if it is parked.
    mutating func cancel(_ ticket: Int) -> (found: Bool, waiter: Waiter?) {
        guard let entry = entries.removeValue(forKey: ticket) else { return (false, nil) }
        if case .waiting(let waiter) = entry { return (true, waiter) }
        return (true, nil)
    }

    /// The sync state settled these calls: the parked ones to resume, with what they throw (nil:
    /// they return); those not parked yet are resumed when they are.
    mutating func wake(_ settled: [(ticket: Int, failure: LiveRecordError?)]) -> [(waiter: Waiter, failure: LiveRecordError?)] {
        settled.compactMap { ticket, failure in
            switch entries[ticket] {
            case .waiting(let waiter)?:
                entries[ticket] = nil
                return (waiter, failure)
            case .enrolled?:
                entries[ticket] = .woken(failure)
                return nil
            case .woken?, nil:
                return nil
            }
        }
    }
}
