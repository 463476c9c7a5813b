/// The `save()` calls waiting on one live value, and the failed edits they throw — plain state,
/// part of a ``SyncState``, changed under its owner's lock.
///
/// Local edits are counted; a call waits until the edits made before it are settled
/// (committed, superseded, or failed). A failure is thrown by every call waiting for one of
/// its edits — whichever task made the edit, since a task may wait for edits made on its
/// behalf by another — and by the first call made after the last of them; then it is closed
/// to other callers. Each task that made one of its edits throws it from its next call,
/// however many other calls came between: a task's `save()` that returns means its own edits
/// are settled without failure.
struct SaveLedger {
    /// A failure, and the local edits (by count) it undid.
    struct Failure {
        let error: LiveRecordError
        let edits: ClosedRange<UInt64>
        /// The tasks that made the edits and have not called `save()` since.
        var editors: Set<Editor>
        /// Still thrown by any call made after one of its edits.
        var isOpen = true
    }

    /// The most failures kept for tasks that have not called `save()` since their edit failed.
    static var failuresKept: Int { 32 }

    private var waiters: [(ticket: Int, through: UInt64, editor: Editor?)] = []
    private var failures: [Failure] = []

    var isEmpty: Bool { waiters.isEmpty }

    /// A call by `editor` with `ticket`, made after `through` edits.
    mutating func wait(_ ticket: Int, through: UInt64, editor: Editor?) {
        waiters.append((ticket, through, editor))
    }

    /// The call with `ticket` stopped waiting (its task was cancelled).
    mutating func forget(_ ticket: Int) {
        waiters.removeAll { $0.ticket == ticket }
    }

    /// The `lost` edits failed with `error`. Beyond ``failuresKept``, the oldest are forgotten.
    mutating func record(_ error: LiveRecordError, _ lost: LostEdits) {
        failures.append(Failure(error: error, edits: lost.range, editors: lost.editors))
        if failures.count > Self.failuresKept { failures.removeFirst(failures.count - Self.failuresKept) }
    }

    /// The calls whose edits are all settled once `settled` edits are, each with what it
    /// throws; they wait no more.
    mutating func wake(settled: UInt64) -> [(ticket: Int, failure: LiveRecordError?)] {
        let ready = waiters.filter { $0.through <= settled }
        guard !ready.isEmpty else { return [] }
        waiters.removeAll { $0.through <= settled }
        let woken = ready.map { waiter in (waiter.ticket, failure(thrownByCallAfter: waiter.through, by: waiter.editor)) }
        // A task is told of the failures of edits all made before its call (a later edit of its
        // own in a failure is told by its next call). A failure is closed to other callers once
        // one that called after all its edits has thrown it, with the others woken with it.
        for waiter in ready {
            guard let editor = waiter.editor else { continue }
            for index in failures.indices where failures[index].edits.upperBound <= waiter.through { failures[index].editors.remove(editor) }
        }
        if let latest = ready.map(\.through).max() {
            for index in failures.indices where failures[index].edits.upperBound <= latest { failures[index].isOpen = false }
        }
        failures.removeAll { !$0.isOpen && $0.editors.isEmpty }
        return woken
    }

    /// What a call made after `through` edits, by `editor`, throws: the first failure of an
    /// edit made before the call that is open to every caller, or that this caller's task made.
    private func failure(thrownByCallAfter through: UInt64, by editor: Editor?) -> LiveRecordError? {
        failures.first { failure in
            failure.edits.lowerBound <= through && (failure.isOpen || editor.map(failure.editors.contains) == true)
        }?.error
    }
}

/// Local edits lost together: the first and last (by count), and the tasks that made them.
struct LostEdits {
    var range: ClosedRange<UInt64>
    var editors: Set<Editor>

    func merging(_ other: LostEdits) -> LostEdits {
        LostEdits(range: min(range.lowerBound, other.range.lowerBound)...max(range.upperBound, other.range.upperBound),
                  editors: editors.union(other.editors))
    }
}
