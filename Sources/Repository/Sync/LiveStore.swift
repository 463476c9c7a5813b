/// One live value — a record, or an aggregate — shared by all its handles: its ``SyncState``
/// and observers behind one lock, and the loop that writes local edits through.
///
/// Every change goes through one transition of the state under the lock: a local edit through
/// any `Var` onto the value, a write's outcome, a read's result. The transition's effects —
/// telling observers, waking `save()` callers, starting the write loop, reporting errors —
/// run after the lock is released.
@usableFromInline
final class LiveStore<Table: LiveTable>: @unchecked Sendable {
    // @unchecked: the save() waiters and the lease are only touched under `waiters`' lock; the
    // state lives in `cell`, behind its lock; the rest is immutable.
    @usableFromInline typealias Content = Table.Content
    @usableFromInline typealias Value = Content.Value

    @usableFromInline let id: Table.ID
    @usableFromInline let table: Table
    @usableFromInline let keyText: String
    @usableFromInline let sequence: ReadSequence
    let report: @Sendable (LiveRecordError) -> Void
    let metrics: LiveMetrics
    private let reads: Locked<ReadCount>
    private let database: Database
    /// Told each newly committed state (aggregates keep their child routes current with it).
    @usableFromInline let committedChanged: (@Sendable (Committed<Content>) -> Void)?
    @usableFromInline let cell: ObservedState<SyncState<Content>>
    private let waiters = Locked(Waiters())

    /// What is kept apart from the state, under a lock of its own.
    private struct Waiters {
        var saves = SaveWaiters<CheckedContinuation<Void, any Error>>()
        /// The lease handles hold (see ``StoreLease``), referred to weakly: a write under way holds it.
        weak var lease: StoreLease<Table>?
    }

    /// A store of the row `id`, which the identity map names `keyText` (``LiveRepository/keyText(_:)``).
    @usableFromInline init(id: Table.ID, keyText: String, committed: Committed<Content>, readAs sequenceNumber: UInt64, table: Table, context: LiveContext,
         committedChanged: (@Sendable (Committed<Content>) -> Void)? = nil) {
        self.id = id
        self.table = table
        self.keyText = keyText
        self.sequence = context.sequence
        self.report = context.report
        self.metrics = context.metrics
        self.reads = context.reads
        self.database = context.database
        let policy = context.policy
        self.committedChanged = committedChanged
        cell = ObservedState(SyncState(table: table.shownName, key: keyText, policy: policy, committed: committed, sequence: sequenceNumber))
    }

    /// Refers back to the lease made for this store.
    func attach(_ lease: StoreLease<Table>) {
        waiters.withLock { $0.lease = lease }
    }

    /// A new handle onto the shared value, holding `lease`.
    @inlinable func handle(holding lease: StoreLease<Table>) -> Var<Value> {
        Var(root: cell, modify: modify, persistence: lease)
    }

    @usableFromInline var state: LiveState { cell.inspect { $0.lifecycle } }
    @usableFromInline var hasUnsettledEdits: Bool { cell.inspect { $0.settled < $0.edits } }
    /// The committed value and version, and whether the row exists.
    var committed: (Committed<Content>, LiveState) { cell.inspect { ($0.committed, $0.lifecycle) } }
    /// The value handles show.
    @inlinable var value: Value { cell.inspect { $0.value } }
    /// The versions of the committed rows.
    var committedVersion: CommittedVersion? { cell.inspect { CommittedVersion(rows: Content.rowVersions($0.committed)) } }

    /// Observes the shared value for the live query `query`, which holds it as an element.
    func subscribe(member query: ObjectIdentifier, _ handler: @escaping @Sendable (Update<Value>) -> Void) -> Subscription {
        cell.subscribe(initial: false, member: query, handler)
    }

    /// A local edit through a `Var`: `body` runs under the lock and must not touch this store.
    @inlinable func modify(author: Author?, _ body: (inout Value) -> Void) {
        let editor = Editor.current
        perform(cell.transition { sync in
            var new = sync.value
            body(&new)
            let (changed, effects) = sync.edit(to: new, readsStarted: sequence.current, editor: editor)
            return (changed ? .some(author) : .none, effects)
        })
    }

    /// A live query's element was edited from `old` to `new` (`old` as the query showed it,
    /// perhaps older than this store's value in other fields): the fields that edit changed
    /// are set on this store's value, exactly; an edit that cannot be made is refused, reported.
    func edit(from old: Value, to new: Value, author: Author?) {
        let editor = Editor.current
        perform(cell.transition { sync in
            do {
                let fields = try Content.fields(changedFrom: old, to: new)
                guard !fields.isEmpty else { return (.none, SyncEffects()) }
                let merged = try Content.replacing(fields, in: sync.value, from: new)
                let (changed, effects) = sync.edit(to: merged, readsStarted: sequence.current, editor: editor)
                return (changed ? .some(author) : .none, effects)
            } catch {
                return (.none, sync.refuse(error, editor: editor))
            }
        })
    }

    /// Waits until every edit made before it is settled, and throws a failure
    /// (see ``SaveLedger`` for which calls throw which); cancelling the task stops the
    /// wait (with `CancellationError`), not the writes.
    @usableFromInline func save() async throws {
        try await awaitSave(enrolSave())
    }

    /// Counts the edits made so far for a `save()`: from now on a failure of one of them is
    /// thrown to it, even before ``awaitSave(_:)`` waits (a live query enrols every member
    /// store first, then waits for each).
    func enrolSave() -> Int {
        let ticket = waiters.withLock { $0.saves.enrol() }
        let editor = Editor.current
        transition { $0.save(ticket, editor: editor) }
        return ticket
    }

    /// Waits until the edits counted by `ticket` are settled; throws a failure (see ``SaveLedger``).
    /// A task that holds every connection of the pool (in `withConnection` or `transaction`)
    /// would wait forever for a write that cannot get one: it is told so at once, and the
    /// edits are written once it gives a connection back.
    func awaitSave(_ ticket: Int) async throws {
        if database.isHeldWhole, waiters.withLock({ $0.saves.isUnsettled(ticket) }) {
            cancelSave(ticket)
            throw PostgresError(.invalidStatement, "save() in a task that holds all \(database.maximumConnections) connection(s) of the pool, in withConnection "
                                + "or transaction, would wait forever for the write, which needs one: the edits stay, and are written once the connection is given back")
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                guard let woken = waiters.withLock({ $0.saves.park(ticket, continuation) }) else { return }
                if let failure = woken { continuation.resume(throwing: failure) } else { continuation.resume() }
            }
        } onCancel: {
            cancelSave(ticket)
        }
    }

    private func cancelSave(_ ticket: Int) {
        let (found, waiter) = waiters.withLock { $0.saves.cancel(ticket) }
        guard found else { return }
        transition { $0.forgetSave(ticket) }
        waiter?.resume(throwing: CancellationError())
    }

    // MARK: - Transitions

    /// Runs one transition under the lock, then its effects.
    @inlinable func transition(_ body: (inout SyncState<Content>) -> SyncEffects) {
        guard let committedChanged else {
            return perform(cell.transition { sync in
                let effects = body(&sync)
                return (effects.publish.map { .some($0) }, effects)
            })
        }
        var newlyCommitted: Committed<Content>?
        let effects = cell.transition { sync in
            let before = sync.appliedSequence
            let effects = body(&sync)
            if sync.appliedSequence != before { newlyCommitted = sync.committed }
            return (effects.publish.map { .some($0) }, effects)
        }
        if let newlyCommitted { committedChanged(newlyCommitted) }
        perform(effects)
    }

    @usableFromInline func perform(_ effects: SyncEffects) {
        for error in effects.reports { report(error) }
        if !effects.wake.isEmpty {
            let resumed = waiters.withLock { $0.saves.wake(effects.wake) }
            for (waiter, failure) in resumed { failure.map { waiter.resume(throwing: $0) } ?? waiter.resume() }
        }
        if effects.startWriting {
            // Holding the lease: a read meanwhile finds this store, with the edits being written.
            let lease = waiters.withLock { $0.lease }
            Task {
                await writeLoop()
                withExtendedLifetime(lease) {}
            }
        }
        if effects.reread { Task { await reread() } }
    }

    /// Numbers a read about to start on the change feed's thread (see ``ReadSequence/next()``).
    @usableFromInline func sequenceNumber() -> UInt64 { sequence.next() }

    /// Numbers a read about to start anywhere else (see ``ReadSequence/nextRead()``).
    @usableFromInline func readNumber() async -> UInt64 { await sequence.nextRead() }

    /// Counts rows re-read for metrics.
    @usableFromInline func countReread(_ rows: Int) { metrics.rowsReread.increment(by: rows) }

    /// Whether this announcement of the value's own row (an aggregate's root) means it must be
    /// read (see ``SyncState/announced(_:version:)``).
    @usableFromInline func isStale(after change: Change) -> Bool {
        cell.update { $0.announced(change.operation, version: change.version) }
    }

    /// Whether the row the stream delivered at `position` would be taken now.
    @inlinable func takesStreamed(at position: StreamedVersion) -> Bool {
        cell.inspect { $0.takesStreamed(at: position) }
    }

    /// The stream delivered `change` with its row, decoded as `row` (nil: not decoded): taken
    /// when the state is one step behind the stream (see ``SyncState/streamed(_:version:at:row:sequence:)``);
    /// otherwise whether the row must be read. Taken, the row is numbered `number` — a number
    /// drawn once the stream had delivered it (by default, now), so that a read started later
    /// prevails, and an applied one refuses it.
    @inlinable func streamed(_ change: Change, row: Committed<Content>?, numbered number: UInt64? = nil) -> (stale: Bool, taken: Bool) {
        streamed(change.operation, version: change.version, at: change.row?.position, row: row, numbered: number)
    }

    /// ``streamed(_:row:numbered:)`` of a change's operation, version and stream position.
    @inlinable func streamed(_ operation: Change.Operation, version: Int64, at position: StreamedVersion?, row: Committed<Content>?,
                             numbered number: UInt64? = nil) -> (stale: Bool, taken: Bool) {
        var outcome = (stale: false, taken: false)
        transition { sync in
            let next = sync.streamed(operation, version: version, at: position, row: row, sequence: number ?? sequence.next())
            outcome = (next.stale, next.taken)
            return next.effects
        }
        return outcome
    }

    /// Counts rows taken from the stream (after their transitions: no store's lock is held).
    @usableFromInline func countStreamed(_ rows: Int) {
        metrics.rowsStreamed.increment(by: rows)
        reads.withLock { $0.streamed += rows }
    }

    /// Applies a read that started as number `sequence` (nil: the row is gone).
    @inlinable func applyRead(_ row: Committed<Content>?, sequence: UInt64) {
        transition { $0.applyRead(row, sequence: sequence) }
    }

    /// Applies a read, numbered `sequence`, of a row whose latest change the stream carried as
    /// `change` — the row read instead of taken: the store is told of the change first, as the
    /// feed tells it when no query routes the row (so that from the version read it can take the
    /// stream's next row), in the same transition. Nil `change`: ``applyRead(_:sequence:)``.
    @inlinable func applyRead(_ row: Committed<Content>?, sequence: UInt64, streamed change: Change?) {
        guard let change else { return applyRead(row, sequence: sequence) }
        transition { sync in
            _ = sync.streamed(change.operation, version: change.version, at: change.row?.position, row: nil, sequence: sequence)
            return sync.applyRead(row, sequence: sequence)
        }
    }

    /// Applies a read, numbered `sequence`, of a row at `version`: when the store holds that
    /// version and nothing else follows from it (see ``SyncState/confirmRead(version:sequence:)``),
    /// the row only confirms it and is never decoded; otherwise `decode` makes it a value and it
    /// is applied. `decode` runs the user's `init(from:)`, so it runs outside the store's lock
    /// (it may read live values). A row that does not decode leaves the store as it was, and
    /// is thrown.
    @inlinable func applyRead(version: Content.Version, sequence: UInt64, decode: () throws -> Committed<Content>) throws {
        // An aggregate tells of each newly committed state (``transition(_:)``): always applied.
        if committedChanged == nil, let effects = cell.update({ $0.confirmRead(version: version, sequence: sequence) }) {
            if !effects.isNothing { perform(effects) }
            return
        }
        applyRead(try decode(), sequence: sequence)
    }

    func reread() async {
        let number = await sequence.nextRead()
        do {
            let row = try await table.read([id]).first?.committed
            applyRead(row, sequence: number)
        } catch {
            report(.refreshFailed(table: table.shownName, error))
        }
    }
}
