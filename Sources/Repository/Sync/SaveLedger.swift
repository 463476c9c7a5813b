/// The `save()` calls waiting on one live value, and the failed edits they throw — plain state,
/// part of a ``SyncState``, changed under its owner's lock.
///
/// Local edits are counted; a call waits until the edits made before it are settled
/// (committed, superseded, or failed), then throws one failure or none:
/// - a failure of an edit its own task made (or carried, see
///   ``SyncState/edit(to:readsStarted:editor:)``) before the call, and not yet thrown to that
///   task by a call made after that edit — however many other tasks' calls came between;
/// - else one open to every caller: a failure is open from the start, so every call waiting
///   for one of its edits throws it, whichever task made it (a task may wait for edits made on
///   its behalf by another); it is closed once calls made after all its edits are woken.
///
/// The failures a call covers but does not throw — its task's others, and other tasks' it
/// closes — are on `errors` only.
@usableFromInline
struct SaveLedger {
    /// A failure, and the local edits (by count) it undid.
    struct Failure {
        let error: LiveRecordError
        let edits: ClosedRange<UInt64>
        /// The tasks that made or carried the edits and were not told since.
        var editors: EditorEdits
        /// Still thrown by any call made after one of its edits.
        var isOpen = true
    }

    /// The most failures kept only for the tasks that made them (closed to other callers):
    /// beyond it, the oldest are forgotten (they were on `errors`).
    static var failuresKept: Int { 32 }

    private var waiters: [(ticket: Int, through: UInt64, editor: Editor?)] = []
    private var failures: [Failure] = []

    @usableFromInline var hasWaiters: Bool { !waiters.isEmpty }

    /// A call by `editor` with `ticket`, made after `through` edits.
    mutating func wait(_ ticket: Int, through: UInt64, editor: Editor?) {
        waiters.append((ticket, through, editor))
    }

    /// The call with `ticket` stopped waiting (its task was cancelled).
    mutating func forget(_ ticket: Int) {
        waiters.removeAll { $0.ticket == ticket }
    }

    /// The `lost` edits failed with `error`.
    @usableFromInline mutating func record(_ error: LiveRecordError, _ lost: LostEdits) {
        failures.append(Failure(error: error, edits: lost.range, editors: lost.editors))
    }

    /// The calls whose edits are all settled once `settled` edits are, each with what it
    /// throws; they wait no more.
    @usableFromInline mutating func wake(settled: UInt64) -> [(ticket: Int, failure: LiveRecordError?)] {
        let ready = waiters.filter { $0.through <= settled }
        guard !ready.isEmpty else { return [] }
        waiters.removeAll { $0.through <= settled }
        let woken = ready.map { waiter in (waiter.ticket, failure(thrownByCallAfter: waiter.through, by: waiter.editor)) }
        // A task is told of its failed edits made before its call (one made after is told by
        // its next call). A failure is closed to other callers once one that called after all
        // its edits has thrown it, with the others woken with it.
        for waiter in ready {
            guard let editor = waiter.editor else { continue }
            for index in failures.indices where failures[index].editors[editor].map({ $0.upperBound <= waiter.through }) ?? false {
                failures[index].editors[editor] = nil
            }
        }
        if let latest = ready.map(\.through).max() {
            for index in failures.indices where failures[index].edits.upperBound <= latest { failures[index].isOpen = false }
        }
        failures.removeAll { !$0.isOpen && $0.editors.isEmpty }
        // Open ones stay until a call throws them: only those kept for their tasks are bounded.
        var excess = failures.filter { !$0.isOpen }.count - Self.failuresKept
        if excess > 0 {
            failures = failures.filter { failure in
                guard !failure.isOpen, excess > 0 else { return true }
                excess -= 1
                return false
            }
        }
        return woken
    }

    /// What a call made after `through` edits, by `editor`, throws: the first failure of its
    /// own task's edits made before the call, else the first open one of an edit made before it.
    private func failure(thrownByCallAfter through: UInt64, by editor: Editor?) -> LiveRecordError? {
        let own = editor.flatMap { editor in failures.first { $0.editors[editor].map { $0.lowerBound <= through } ?? false } }
        return (own ?? failures.first { $0.isOpen && $0.edits.lowerBound <= through })?.error
    }
}

/// Local edits lost together: the first and last (by count), and the tasks that made or carried them.
@usableFromInline
struct LostEdits {
    @usableFromInline var range: ClosedRange<UInt64>
    @usableFromInline var editors: EditorEdits

    @usableFromInline init(range: ClosedRange<UInt64>, editors: EditorEdits) { (self.range, self.editors) = (range, editors) }

    @usableFromInline func merging(_ other: LostEdits) -> LostEdits {
        LostEdits(range: min(range.lowerBound, other.range.lowerBound)...max(range.upperBound, other.range.upperBound),
                  editors: editors.union(other.editors))
    }
}
