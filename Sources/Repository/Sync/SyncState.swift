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
///   again). A read that started before a state already held is dropped. A row from the
///   replication stream is numbered when it is taken, and taken only when the state holds the
///   version of the row the stream delivered before it (see ``streamed(_:version:at:row:sequence:)``).
/// - **Writes set only edited fields**, expecting the version they were based on; on a version
///   conflict each field is re-applied on the newer state, and only a field both sides changed
///   (to different values) is a conflict, settled by the ``ConflictPolicy`` and reported.
/// - **`save()` waits for the edits made before it**: it resumes once each of them is
///   committed, superseded by a later committed edit, or reported as failed.
///
/// The transitions a read applies are `@inlinable`, so that they run specialized for the user's
/// type (see ``StoreEngine``); the properties they touch are therefore internal rather than
/// private. Change them only through the transitions.
@usableFromInline
struct SyncState<Content: SyncContent> {
    @usableFromInline typealias Value = Content.Value
    @usableFromInline typealias Field = Content.Field

    /// For error messages.
    @usableFromInline let table: String
    @usableFromInline let key: String
    @usableFromInline let policy: ConflictPolicy

    /// What handles show.
    @usableFromInline var value: Value
    /// What the database last said.
    @usableFromInline var committed: Committed<Content>
    @usableFromInline var lifecycle = LiveState.live
    /// The sequence number of the read (or write) that produced `committed`.
    @usableFromInline var appliedSequence: UInt64
    /// Whether `committed` came from our own write's result rather than from a read.
    @usableFromInline var committedByWrite = false
    /// Whether `value` is a committed value as the database gave it, with no local edit on it
    /// (see ``SyncContent/differsAsRead(_:_:)``).
    @usableFromInline var showsCommitted = true
    /// Fields edited and not yet sent.
    @usableFromInline var pending: [Field: Edit] = [:] { didSet { hasPending = !pending.isEmpty } }
    @usableFromInline var inFlight: Write? { didSet { hasInFlight = inFlight != nil } }
    /// `!pending.isEmpty` and `inFlight != nil`, kept apart: in code not specialized for the
    /// content type, asking a dictionary or an optional of it looks up runtime metadata, and
    /// every row read or taken asks.
    @usableFromInline var hasPending = false
    @usableFromInline var hasInFlight = false
    /// The row was deleted while `inFlight` was under way: its edits were reported lost.
    @usableFromInline var inFlightIsAbandoned = false
    /// A write loop is running (it asks ``nextWrite()`` until that returns nil).
    @usableFromInline var isWriting = false
    /// Updates announced while a write is under way, most likely its own, not read while it
    /// is; set only by ``announced(_:version:)``.
    var heldAnnouncement: HeldAnnouncement?
    /// The version the replication stream last delivered with the row (see ``streamed(_:version:at:row:sequence:)``).
    @usableFromInline var streamed: StreamedVersion?
    /// Local edits so far, and how many of them are settled (committed, superseded or failed).
    @usableFromInline var edits: UInt64 = 0
    @usableFromInline var settled: UInt64 = 0
    /// The `save()` calls waiting, and the failures they throw.
    @usableFromInline var saves = SaveLedger()

    init(table: String, key: String, policy: ConflictPolicy, committed: Committed<Content>, sequence: UInt64) {
        self.table = table
        self.key = key
        self.policy = policy
        self.value = committed.value
        self.committed = committed
        self.appliedSequence = sequence
    }

    // MARK: - Local edits and save()

    /// A local edit by `editor` made the value `new`, after reads up to number `readsStarted`
    /// started; whether the value changed (observers are told only then). Refused (and
    /// reported) when the row is deleted, or when its fields cannot be told.
    ///
    /// It also carries every other local edit not yet settled: the task may have set those
    /// fields too, to the values they show (which changes nothing), so their failure is its
    /// failure too.
    @usableFromInline mutating func edit(to new: Value, readsStarted: UInt64, editor: Editor? = nil) -> (changed: Bool, effects: SyncEffects) {
        edits += 1
        let editors: EditorEdits = editor.map { [$0: edits...edits] } ?? [:]
        guard lifecycle == .live else {
            settled = edits
            return (false, fail(.deleted(table: table, key: key), LostEdits(range: edits...edits, editors: editors)) + advance())
        }
        let changed: Set<Field>
        do {
            changed = try Content.fields(changedFrom: value, to: new)
        } catch {
            return (false, refuse(error, editors: editors))
        }
        let old = value
        let isChange = !changed.isEmpty || Content.differs(old, new)
        if isChange { (value, showsCommitted) = (new, false) }
        let latest = edits  // read before the loop: a change of `pending` is an access to the whole state
        for field in localFields.subtracting(changed) {
            pending[field]?.carry(latest, by: editor)
            if !inFlightIsAbandoned { inFlight?.edits[field]?.carry(latest, by: editor) }
        }
        for field in changed {
            if let edit = pending[field] {
                pending[field] = Edit(base: edit.base, since: readsStarted, edits: edit.edits.lowerBound...edits,
                                      editors: edit.editors.union(editors))
            } else {
                pending[field] = Edit(base: old, since: readsStarted, edits: edits...edits, editors: editors)
            }
        }
        return (isChange, advance())
    }


    /// A local edit that cannot be made (its fields cannot be told or merged exactly) is
    /// refused: the value stays, and the failure is reported and thrown to `save()`.
    mutating func refuse(_ error: any Error, editor: Editor?) -> SyncEffects {
        edits += 1
        return refuse(error, editors: editor.map { [$0: edits...edits] } ?? [:])
    }

    private mutating func refuse(_ error: any Error, editors: EditorEdits) -> SyncEffects {
        // Settled once the edits before it are (``advance()``): a `save()` after it still waits
        // for their writes, and throws this refusal then.
        let failure = LiveRecordError.writeFailed(table: table, key: key, PostgresError(.invalidParameter, "the edit was refused: \(error)"))
        return fail(failure, LostEdits(range: edits...edits, editors: editors)) + advance()
    }

    /// `save()` with `ticket`, called by `editor`: resumed (through ``SyncEffects/wake``) once
    /// every edit made so far is settled — at once if it is.
    mutating func save(_ ticket: Int, editor: Editor? = nil) -> SyncEffects {
        saves.wait(ticket, through: edits, editor: editor)
        return advance()
    }

    /// The `save()` with `ticket` stopped waiting (its task was cancelled).
    mutating func forgetSave(_ ticket: Int) -> SyncEffects {
        saves.forget(ticket)
        return SyncEffects()
    }

    // MARK: - Reads

    /// A read of the row (nil: no such row) that started as number `sequence`.
    @inlinable mutating func applyRead(_ row: Committed<Content>?, sequence: UInt64) -> SyncEffects {
        guard sequence > appliedSequence else {
            // Older than what we hold. When that is our own write's result, though, a read
            // that started before it may have seen a later commit — or the same transaction's
            // later change (an AFTER trigger updating the row again keeps its version): read again.
            return SyncEffects(reread: committedByWrite)
        }
        guard let row else { return delete(at: sequence) }
        return adopt(row, sequence: sequence, byWrite: false, seenAfter: sequence)
    }

    /// ``applyRead(_:sequence:)`` of a row read at the version held, where that changes only
    /// the bookkeeping: a version is the transaction that wrote the row, so the row is the one
    /// held, and it need not be decoded, compared or shown. Nil when the read may do more —
    /// local edits to reconcile, a write under way, a value not shown as committed, a deleted
    /// row, or a row held as our own write returned it, which its transaction may have changed
    /// again after (an AFTER trigger), keeping the version — and the row must be applied.
    @inlinable mutating func confirmRead(version: Content.Version, sequence: UInt64) -> SyncEffects? {
        guard lifecycle == .live, !hasPending, !hasInFlight, showsCommitted, !committedByWrite, committed.version == version else { return nil }
        guard sequence > appliedSequence else { return SyncEffects() }  // as applyRead: same version, nothing to read again
        (appliedSequence, committedByWrite) = (sequence, false)
        return advance()
    }

    /// Makes `row` the committed state (numbered `sequence`; it shows the row as it was after
    /// reads up to `seenAfter` started).
    @inlinable mutating func adopt(_ row: Committed<Content>, sequence: UInt64, byWrite: Bool, seenAfter: UInt64) -> SyncEffects {
        let revived = lifecycle == .deleted
        (committed, appliedSequence, committedByWrite, lifecycle) = (row, sequence, byWrite, .live)
        var effects = reconcilePending(seenAfter: seenAfter) + rebase()
        if revived { effects.publish = effects.publish ?? .database }
        return effects + advance()
    }

    /// The row is gone (read as number `sequence`). Local edits are lost — those still held,
    /// and `alsoLost`, those of a write just given up.
    @inlinable mutating func delete(at sequence: UInt64, alsoLost: LostEdits? = nil) -> SyncEffects {
        (appliedSequence, committedByWrite) = (max(appliedSequence, sequence), false)
        guard lifecycle == .live else { return advance() }
        lifecycle = .deleted
        let held = Set(pending.keys).union(inFlightIsAbandoned ? [] : inFlight?.fields ?? [])
        let hadEdits = alsoLost != nil || !held.isEmpty
        let lost = [alsoLost, held.isEmpty ? nil : lostEdits(of: held)].compactMap { $0 }
            .reduce(nil as LostEdits?) { lost, next in lost?.merging(next) ?? next }
            ?? LostEdits(range: edits...edits, editors: [:])
        pending = [:]
        inFlightIsAbandoned = hasInFlight
        (value, showsCommitted) = (committed.value, true)
        var effects = SyncEffects(publish: .deletion)
        if hadEdits { effects = effects + fail(.deleted(table: table, key: key), lost) }
        return effects + advance()
    }

    // MARK: - Helpers

    /// Checks the pending edits (those not being written: the write settles its own) against a
    /// newly committed state, which shows the row as it was after reads up to `seenAfter`
    /// started: an edit the database holds in a state seen after the edit is done; an edit of a
    /// field the other writer changed since its base, to another value, is a conflict.
    @inlinable mutating func reconcilePending(seenAfter: UInt64) -> SyncEffects {
        guard hasPending else { return SyncEffects() }
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
            let lost = lostEdits(of: changedByThem)
            for field in changedByThem { pending[field] = nil }
            return fail(conflict, lost)
        }
        for field in changedByThem { pending[field]?.base = theirs }  // decided: ours is written over theirs
        return SyncEffects(reports: [conflict])
    }

    /// Recomputes the value as the committed state plus local edits. A value the same as the
    /// database holds it as the one shown (a `Date` the database keeps to the microsecond, a
    /// NaN) is kept as shown, and nobody is told: an update is never old == new.
    @inlinable mutating func rebase() -> SyncEffects {
        let rebased: Value
        do {
            rebased = try overlayingLocalEdits(on: committed.value)
        } catch {
            return mergeFailed(error)
        }
        let asRead = !hasLocalEdits
        guard showsCommitted && asRead ? Content.differsAsRead(value, rebased) : Content.differs(value, rebased) else {
            // The same as stored, yet perhaps not in Swift: a `Date` finer than the microsecond
            // its column keeps. With no local edit left, the value is the row's — unannounced,
            // since nothing changed as stored.
            if asRead && !showsCommitted { (value, showsCommitted) = (rebased, true) }
            return SyncEffects()
        }
        (value, showsCommitted) = (rebased, asRead)
        return SyncEffects(publish: .database)
    }

    /// The local edits cannot be carried over the newer committed state exactly: they fail
    /// (a write under way may still commit: the error says its outcome is unknown), and the
    /// value is the database's.
    @inlinable mutating func mergeFailed(_ error: any Error) -> SyncEffects {
        let lost = lostEdits(of: localFields)
        let writing = hasInFlight && !inFlightIsAbandoned
        let failure = PostgresError(.invalidParameter, "this process's edits could not be merged exactly into the newer row and were dropped"
                                    + (writing ? " (a write already under way may still commit)" : "") + ": \(error)")
        pending = [:]
        inFlightIsAbandoned = hasInFlight
        settled = edits
        var effects = fail(.writeFailed(table: table, key: key, failure), lost)
        if Content.differs(value, committed.value) {
            (value, showsCommitted) = (committed.value, true)
            effects.publish = .revert
        }
        return effects + advance()
    }

    /// Starts the write loop when there is something to write, and wakes the `save()` callers
    /// whose edits are all settled.
    @inlinable mutating func advance() -> SyncEffects {
        var effects = SyncEffects()
        if lifecycle == .live, hasPending, !isWriting {
            isWriting = true
            effects.startWriting = true
        }
        if (!hasPending && !hasInFlight) || lifecycle == .deleted { settled = edits }
        if saves.hasWaiters { effects.wake = saves.wake(settled: settled) }
        return effects
    }

    /// Records a failure of the `lost` local edits for the `save()` callers, and reports it.
    @inlinable mutating func fail(_ error: LiveRecordError, _ lost: LostEdits) -> SyncEffects {
        saves.record(error, lost)
        return SyncEffects(reports: [error])
    }
}
