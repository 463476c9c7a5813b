/// The sync state of one live value — a row, or an aggregate of rows — as a plain value.
///
/// It holds what the database last said (``committed``, with the sequence number of the read
/// that produced it), what this process edited and has not yet sent (``pending``: each field
/// with the value it was edited from), the write under way (``inFlight``), and whether the row
/// exists. Its methods are the transitions; each returns the ``SyncEffects`` its owner
/// performs outside the lock. No I/O and no locks in here: the owner takes one lock around
/// each transition (see ``LiveStore``).
///
/// The rules it keeps:
/// - **The value is the committed state plus local edits**: `value` equals `committed.value`
///   with the pending and in-flight fields replaced by this process's values.
/// - **Reads apply in the order they started** (`sequence`), never by version: a read is the
///   database's truth when it ran, even if its version is lower (a row deleted and inserted
///   again). A read that started before a state already held is dropped.
/// - **Writes set only edited fields**, expecting the version they were based on; on a version
///   conflict each field is re-applied on the newer state, and only a field both sides changed
///   (to different values) is a conflict, settled by the ``ConflictPolicy`` and reported.
/// - **`save()` waits for the edits made before it**: it resumes once each of them is
///   committed, superseded by a later committed edit, or reported as failed.
struct SyncState<Content: SyncContent> {
    typealias Value = Content.Value
    typealias Field = Content.Field

    /// A local edit of one field not yet written: the value it was made on, and the number
    /// of the last read started before it (a read numbered higher started after the edit).
    struct Edit: Sendable {
        var base: Value
        var since: UInt64
    }

    /// A write under way: the fields it sets, the value it takes them from, the committed
    /// state it expects, and the last local edit it carries.
    struct Write: Sendable {
        let fields: Set<Field>
        let snapshot: Value
        let base: Committed<Content>
        /// Each field's edit.
        let edits: [Field: Edit]
        let through: UInt64
        /// The number of the last read started when the write was sent: its result shows the
        /// row no later than its commit, which edits made after this may follow.
        let sentAfter: UInt64
    }

    /// For error messages.
    let table: String
    let key: String
    let policy: ConflictPolicy

    /// What handles show.
    private(set) var value: Value
    /// What the database last said.
    private(set) var committed: Committed<Content>
    private(set) var lifecycle = LiveState.live
    /// The sequence number of the read (or write) that produced `committed`.
    private(set) var appliedSequence: UInt64
    /// Whether `committed` came from our own write's result rather than from a read.
    private var committedByWrite = false
    /// Fields edited and not yet sent.
    private(set) var pending: [Field: Edit] = [:]
    private(set) var inFlight: Write?
    /// The row was deleted while `inFlight` was under way: its edits were reported lost.
    private var inFlightIsAbandoned = false
    /// A write loop is running (it asks ``nextWrite()`` until that returns nil).
    private(set) var isWriting = false
    /// Local edits so far, and how many of them are settled (committed, superseded or failed).
    private(set) var edits: UInt64 = 0
    private(set) var settled: UInt64 = 0
    private var failures: [LiveRecordError] = []
    private var waiters: [(ticket: Int, through: UInt64)] = []

    init(table: String, key: String, policy: ConflictPolicy, committed: Committed<Content>, sequence: UInt64) {
        self.table = table
        self.key = key
        self.policy = policy
        self.value = committed.value
        self.committed = committed
        self.appliedSequence = sequence
    }

    /// The fields this process has edited that the database does not hold yet.
    var localFields: Set<Field> {
        guard let inFlight, !inFlightIsAbandoned else { return Set(pending.keys) }
        return Set(pending.keys).union(inFlight.fields)
    }

    /// `row` with this process's unsaved edits on top.
    func overlayingLocalEdits(on row: Value) -> Value {
        let local = localFields
        return local.isEmpty ? row : Content.replacing(local, in: row, from: value)
    }

    // MARK: - Local edits and save()

    /// A local edit made the value `new`, after reads up to number `readsStarted` started.
    /// Refused (and reported) when the row is deleted.
    mutating func edit(to new: Value, readsStarted: UInt64) -> (accepted: Bool, effects: SyncEffects) {
        guard lifecycle == .live else { return (false, fail(.deleted(table: table, key: key))) }
        let old = value
        value = new
        edits += 1
        for field in Content.fields(changedFrom: old, to: new) {
            if pending[field] == nil {
                pending[field] = Edit(base: old, since: readsStarted)
            } else {
                pending[field]?.since = readsStarted
            }
        }
        return (true, advance())
    }

    /// `save()` with `ticket`: resumed (through ``SyncEffects/wake``) once every edit made so
    /// far is settled — at once if it is.
    mutating func save(_ ticket: Int) -> SyncEffects {
        waiters.append((ticket, edits))
        return advance()
    }

    // MARK: - Writes

    /// The write loop's next write, sent after reads up to number `readsStarted` started; nil
    /// when there is nothing to write (the loop ends).
    mutating func nextWrite(readsStarted: UInt64) -> (Write?, SyncEffects) {
        guard lifecycle == .live, !pending.isEmpty, inFlight == nil else {
            isWriting = false
            return (nil, advance())
        }
        let write = Write(fields: Set(pending.keys), snapshot: value, base: committed, edits: pending, through: edits,
                          sentAfter: readsStarted)
        pending = [:]
        inFlight = write
        return (write, SyncEffects())
    }

    /// The write under way committed. `row` is the state after it: the write's own result
    /// (`isWriteResult`, numbered when it arrived) or a read made after it (nil: the row is gone).
    mutating func writeSucceeded(_ row: Committed<Content>?, sequence: UInt64, isWriteResult: Bool) -> SyncEffects {
        guard let write = inFlight else { return SyncEffects() }
        let effects = writeCommitted()
        guard sequence > appliedSequence else { return effects + rebase() }
        guard let row else { return effects + delete(at: sequence) }
        return effects + adopt(row, sequence: sequence, byWrite: isWriteResult, seenAfter: isWriteResult ? write.sentAfter : sequence)
    }

    /// The write under way committed (or had nothing to write), and the state it produced is
    /// not known yet: the value stays as it is until the next read.
    mutating func writeCommitted() -> SyncEffects {
        guard let write = inFlight else { return SyncEffects() }
        (inFlight, inFlightIsAbandoned) = (nil, false)
        settled = max(settled, write.through)
        return advance()
    }

    /// The write under way found the row at another version; `row` was read since (nil: the
    /// row is gone). Each field is carried over the newer state; a field the other writer
    /// changed too, to another value, is a conflict settled by the policy.
    mutating func writeConflicted(theirs row: Committed<Content>?, sequence: UInt64) -> SyncEffects {
        guard let write = inFlight else { return SyncEffects() }
        let wasAbandoned = inFlightIsAbandoned
        if sequence > appliedSequence {
            guard let row else {
                (inFlight, inFlightIsAbandoned) = (nil, false)
                return delete(at: sequence, unsaved: !wasAbandoned)
            }
            (committed, appliedSequence, committedByWrite, lifecycle) = (row, sequence, false, .live)
        }
        (inFlight, inFlightIsAbandoned) = (nil, false)
        guard lifecycle == .live, !wasAbandoned else { return rebase() + advance() }
        guard committed.version != write.base.version else {
            // Nothing changed, yet the write matched no row: it can never succeed.
            var error = PostgresError(.server, "the row is still at the version the write expected, but the UPDATE matched no row (a row-level security policy or a trigger may hide it)")
            error.sqlState = "40001"
            return writeFailed(.writeFailed(table: table, key: key, error))
        }
        let theirs = committed.value
        let alreadyTheirs = write.fields.subtracting(Content.differing(theirs, write.snapshot, among: write.fields))
        let changedByThem = Content.differing(theirs, write.base.value, among: write.fields).filter { field in
            write.edits[field].map { !Content.differing(theirs, $0.base, among: [field]).isEmpty } ?? true
        }
        let conflicts = changedByThem.subtracting(alreadyTheirs)
        for field in write.fields.subtracting(alreadyTheirs) {
            // Rebased on theirs: written again on the newer version (unless dropped below).
            pending[field] = Edit(base: theirs, since: max(pending[field]?.since ?? 0, write.edits[field]?.since ?? 0))
        }
        var effects = SyncEffects()
        if !conflicts.isEmpty {
            let conflict = conflictError(conflicts, ours: write.snapshot, theirs: theirs)
            if policy == .databaseWins {
                for field in conflicts { pending[field] = nil }
                effects = fail(conflict)
            } else {
                effects.reports.append(conflict)
            }
        }
        return effects + reconcilePending(seenAfter: sequence) + rebase() + advance()
    }

    /// The write under way failed (a constraint, a lost connection): every local edit is
    /// dropped and the value returns to the committed state.
    mutating func writeFailed(_ error: LiveRecordError) -> SyncEffects {
        (inFlight, inFlightIsAbandoned) = (nil, false)
        pending = [:]
        var effects = fail(error)
        if Content.differs(value, committed.value) {
            value = committed.value
            effects.publish = .revert
        }
        settled = edits
        return effects + advance()
    }

    // MARK: - Reads

    /// A read of the row (nil: no such row) that started as number `sequence`.
    mutating func applyRead(_ row: Committed<Content>?, sequence: UInt64) -> SyncEffects {
        guard sequence > appliedSequence else {
            // Older than what we hold. When that is our own write's result, though, a read
            // that started before it may have seen a later commit: read again.
            return SyncEffects(reread: committedByWrite && row?.version != committed.version)
        }
        guard let row else { return delete(at: sequence) }
        return adopt(row, sequence: sequence, byWrite: false, seenAfter: sequence)
    }

    /// Makes `row` the committed state (numbered `sequence`; it shows the row as it was after
    /// reads up to `seenAfter` started).
    private mutating func adopt(_ row: Committed<Content>, sequence: UInt64, byWrite: Bool, seenAfter: UInt64) -> SyncEffects {
        let revived = lifecycle == .deleted
        (committed, appliedSequence, committedByWrite, lifecycle) = (row, sequence, byWrite, .live)
        var effects = reconcilePending(seenAfter: seenAfter) + rebase()
        if revived { effects.publish = effects.publish ?? .database }
        return effects + advance()
    }

    private mutating func delete(at sequence: UInt64, unsaved: Bool = false) -> SyncEffects {
        (appliedSequence, committedByWrite) = (max(appliedSequence, sequence), false)
        guard lifecycle == .live else { return advance() }
        lifecycle = .deleted
        let hadEdits = unsaved || !pending.isEmpty || (inFlight != nil && !inFlightIsAbandoned)
        pending = [:]
        inFlightIsAbandoned = inFlight != nil
        value = committed.value
        var effects = SyncEffects(publish: .deletion)
        if hadEdits { effects = effects + fail(.deleted(table: table, key: key)) }
        return effects + advance()
    }

    // MARK: - Helpers

    /// Checks the pending edits (those not being written: the write settles its own) against a
    /// newly committed state, which shows the row as it was after reads up to `seenAfter`
    /// started: an edit the database holds in a state seen after the edit is done; an edit of a
    /// field the other writer changed since its base, to another value, is a conflict.
    private mutating func reconcilePending(seenAfter: UInt64) -> SyncEffects {
        let theirs = committed.value
        let fields = Set(pending.keys).subtracting(inFlight?.fields ?? [])
        guard !fields.isEmpty else { return SyncEffects() }
        let notThere = Content.differing(theirs, value, among: fields)
        // Holding our value in a read that started before our edit proves nothing: the row may
        // have moved on since. Such an edit is written (and conflicts if it must).
        for field in fields.subtracting(notThere) where pending[field].map({ $0.since < seenAfter }) ?? false {
            pending[field] = nil
        }
        let changedByThem = notThere.filter { field in
            pending[field].map { !Content.differing(theirs, $0.base, among: [field]).isEmpty } ?? false
        }
        guard !changedByThem.isEmpty else { return SyncEffects() }
        let conflict = conflictError(changedByThem, ours: value, theirs: theirs)
        if policy == .databaseWins {
            for field in changedByThem { pending[field] = nil }
            return fail(conflict)
        }
        for field in changedByThem { pending[field]?.base = theirs }  // decided: ours is written over theirs
        return SyncEffects(reports: [conflict])
    }

    /// Recomputes the value as the committed state plus local edits.
    private mutating func rebase() -> SyncEffects {
        let old = value
        value = overlayingLocalEdits(on: committed.value)
        return Content.differs(old, value) ? SyncEffects(publish: .database) : SyncEffects()
    }

    /// Starts the write loop when there is something to write, and wakes the `save()` callers
    /// whose edits are all settled.
    private mutating func advance() -> SyncEffects {
        var effects = SyncEffects()
        if lifecycle == .live, !pending.isEmpty, !isWriting {
            isWriting = true
            effects.startWriting = true
        }
        if (pending.isEmpty && inFlight == nil) || lifecycle == .deleted { settled = edits }
        let ready = waiters.filter { $0.through <= settled }
        guard !ready.isEmpty else { return effects }
        waiters.removeAll { $0.through <= settled }
        let failure = failures.first
        failures.removeAll()
        effects.wake = ready.map { ($0.ticket, failure) }
        return effects
    }

    /// Records a failure for the next `save()` and reports it.
    private mutating func fail(_ error: LiveRecordError) -> SyncEffects {
        failures.append(error)
        return SyncEffects(reports: [error])
    }

    private func conflictError(_ fields: Set<Field>, ours: Value, theirs: Value) -> LiveRecordError {
        .conflict(table: table, key: key, columns: fields.map(Content.name).sorted(), ours: ours, theirs: theirs, policy: policy)
    }
}

extension SyncState: ValueHolding {
    var root: Value { value }
}
