/// The bookkeeping of a store that writes local edits behind the user's back: whether there is
/// something to write, whether a write is under way, what failed, and who waits in `save()`.
///
/// A value type kept under its store's lock; the store decides what a write is.
struct WriteState {
    var lifecycle = LiveState.live
    /// Edited since the write under way (or the last one) took its snapshot.
    var isDirty = false
    var isWriting = false
    /// A round has taken its snapshot and may be writing it now.
    var hasWriteInFlight = false
    /// Counts local edits, so a finished write knows whether the user edited meanwhile.
    var edits = 0
    var failures: [any Error] = []
    var saveWaiters: [CheckedContinuation<Void, any Error>] = []

    /// Whether nothing is waiting to be written or being written.
    var isClean: Bool { !isDirty && !isWriting }

    /// Records a local edit. True when the caller must start the write loop; nil when the row
    /// is deleted and the edit must be undone.
    mutating func edited() -> Bool? {
        guard lifecycle == .live else { return nil }
        isDirty = true
        edits += 1
        defer { isWriting = true }
        return !isWriting
    }

    /// `save()`: the result now, or nil once `continuation` waits for the write under way.
    mutating func save(_ continuation: CheckedContinuation<Void, any Error>) -> Result<Void, any Error>? {
        guard isClean else {
            saveWaiters.append(continuation)
            return nil
        }
        defer { failures.removeAll() }
        return failures.first.map { .failure($0) } ?? .success(())
    }

    /// The write loop's next round: the edit count to snapshot, or nil when everything is
    /// written — then `wake` holds the `save()` callers to resume, with the first failure.
    /// Failures stay for the next `save()` when nobody waits.
    mutating func nextRound() -> (edits: Int?, wake: [CheckedContinuation<Void, any Error>], failure: (any Error)?) {
        hasWriteInFlight = isDirty && lifecycle == .live
        if hasWriteInFlight {
            isDirty = false
            return (edits, [], nil)
        }
        isWriting = false
        guard !saveWaiters.isEmpty else { return (nil, [], nil) }
        defer { saveWaiters.removeAll(); failures.removeAll() }
        return (nil, saveWaiters, failures.first)
    }

    /// Marks the row deleted; true if it was live.
    mutating func delete() -> Bool {
        defer { lifecycle = .deleted; isDirty = false }
        return lifecycle == .live
    }
}

extension [CheckedContinuation<Void, any Error>] {
    /// Resumes every waiter, throwing `failure` if there is one.
    func resumeAll(throwing failure: (any Error)?) {
        for waiter in self { failure.map { waiter.resume(throwing: $0) } ?? waiter.resume() }
    }
}
