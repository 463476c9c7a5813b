/// Whose turn it is on one connection: statements run one at a time, in the order they were
/// called. A plain value; the ``Connection`` actor owns it and resumes whom it names.
struct StatementTurns {
    private var isTaken = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Takes the turn if nobody has it.
    mutating func take() -> Bool {
        if isTaken { return false }
        isTaken = true
        return true
    }

    /// Queues a statement for the turn after those already waiting.
    mutating func enqueue(_ waiter: CheckedContinuation<Void, Never>) {
        waiting.append(waiter)
    }

    /// Ends the current turn. Returns the waiter it passes to (resume it), or nil when the
    /// connection is free again.
    mutating func pass() -> CheckedContinuation<Void, Never>? {
        if waiting.isEmpty {
            isTaken = false
            return nil
        }
        return waiting.removeFirst()
    }
}
