/// One live aggregate: the value its handles share, the committed rows behind it, and the
/// write-through of local changes — one transaction per round, changed rows only.
///
/// Works like ``LiveStore``, at the scale of a root row and its children: local edits mark it
/// dirty and one write loop persists them in order; a version conflict re-reads the aggregate
/// and merges (``AggregateMerge``); announcements re-read the whole aggregate, applied only if
/// the read started after the last one applied.
final class AggregateStore<A: Aggregate>: MemberStore, @unchecked Sendable {
    // @unchecked: every `var` below is read and written only under `lock`. Lock order: this
    // lock, then the value's; never the other way round.
    let id: A.ID
    let table: AggregateTable<A>
    let value: VarStore<A>
    private let policy: ConflictPolicy
    private let report: @Sendable (LiveRecordError) -> Void
    private let lock = Lock()
    /// Held across one apply of a re-read state; taken before `lock`.
    private let applying = Lock()
    private var committed: AggregateSnapshot<A>
    private var writes = WriteState()
    /// Reads are numbered when they start; a read is applied only if it started after the
    /// last one applied, so a slow read never puts back an older state.
    private var readsStarted: UInt64 = 0
    private var lastApplied: UInt64 = 0
    private var subscription: Subscription?

    /// Told the child ids whenever a newly committed state has other children than the last.
    private let childrenChanged: @Sendable ([A.Child.ID]) -> Void

    init(_ snapshot: AggregateSnapshot<A>, table: AggregateTable<A>, policy: ConflictPolicy,
         report: @escaping @Sendable (LiveRecordError) -> Void,
         childrenChanged: @escaping @Sendable ([A.Child.ID]) -> Void = { _ in }) {
        id = snapshot.value.id
        self.table = table
        committed = snapshot
        self.policy = policy
        self.report = report
        self.childrenChanged = childrenChanged
        value = VarStore(snapshot.value)
        subscription = value.subscribe(initial: false) { [weak self] update in self?.localChange(update) }
    }

    var keyText: String { LiveRepository.keyText(id) }
    var state: LiveState { lock.withLock { writes.lifecycle } }
    var knownVersion: Int64 { lock.withLock { committed.rootVersion } }
    /// The committed version of each child row.
    var childVersions: [A.Child.ID: Int64] { lock.withLock { committed.childVersions } }

    func handle() -> Var<A> { Var(store: value, persistence: self) }

    func save() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            if let result = lock.withLock({ writes.save(continuation) }) { continuation.resume(with: result) }
        }
    }

    /// Numbers a read about to start.
    func startRead() -> UInt64 {
        lock.withLock {
            readsStarted += 1
            return readsStarted
        }
    }

    // MARK: - Local changes

    private func localChange(_ update: Update<A>) {
        guard !update.author.isFromDatabase else { return }
        let (start, isDeleted) = lock.withLock { () -> (Bool, Bool) in
            guard let start = writes.edited() else { return (false, true) }
            return (start, false)
        }
        if isDeleted {
            revert()
            fail(.deleted(table: table.qualifiedName, key: keyText))
        } else if start {
            Task { await self.writeLoop() }
        }
    }

    private func writeLoop() async {
        while let (base, snapshot) = nextWrite() {
            do {
                try await write(snapshot, base: base)
            } catch let error as LiveRecordError {
                fail(error)
            } catch {
                revert()
                fail(.writeFailed(table: table.qualifiedName, key: keyText, error as? PostgresError ?? PostgresError(.server, "\(error)")))
            }
        }
    }

    private func nextWrite() -> (AggregateSnapshot<A>, A)? {
        let (job, waiters, failure) = lock.withLock { () -> ((AggregateSnapshot<A>, A)?, [CheckedContinuation<Void, any Error>], (any Error)?) in
            let round = writes.nextRound()
            return (round.edits.map { _ in (committed, value.read()) }, round.wake, round.failure)
        }
        waiters.resumeAll(throwing: failure)
        return job
    }

    /// Writes what `snapshot` changed since `base` in one transaction; on a version conflict,
    /// re-reads and merges, leaving what is still to write for the next round.
    private func write(_ snapshot: A, base: AggregateSnapshot<A>) async throws {
        let changes = try AggregateChanges(from: base.value, to: snapshot)
        guard !changes.isEmpty else { return }
        do {
            try await table.root.database.transaction { connection in
                try await table.write(changes, of: snapshot, base: base, on: connection)
            }
        } catch is AggregateTable<A>.VersionConflict {
            return try await settleConflict(base: base)
        }
        let sequence = startRead()
        guard let fresh = try await table.fetch([id]).first else { return markDeleted() }
        apply(fresh, sequence: sequence, base: snapshot, keepingConflicts: true)
    }

    private func settleConflict(base: AggregateSnapshot<A>) async throws {
        let sequence = startRead()
        guard let theirs = try await table.fetch([id]).first else {
            markDeleted()
            revert()
            throw LiveRecordError.deleted(table: table.qualifiedName, key: keyText)
        }
        let mine = value.read()
        let conflicts = apply(theirs, sequence: sequence, base: base.value, keepingConflicts: policy == .localWins)
        guard !conflicts.isEmpty else { return }
        let conflict = LiveRecordError.conflict(table: table.qualifiedName, key: keyText, columns: conflicts,
                                                ours: mine, theirs: theirs.value, policy: policy)
        if policy == .localWins { return report(conflict) }
        throw conflict
    }

    /// Makes `snapshot` the committed state and the value `snapshot` plus the local edits
    /// made since `base` (nil: since the committed state it replaces); edits left over are
    /// written next round. Returns the conflicts.
    ///
    /// Applies run one at a time (`applying`), so each one's committed state and value move
    /// together: a local edit is always told apart from an earlier apply's change.
    @discardableResult
    private func apply(_ snapshot: AggregateSnapshot<A>, sequence: UInt64, base explicitBase: A? = nil, keepingConflicts: Bool) -> [String] {
        applying.withLock { applyInOrder(snapshot, sequence: sequence, base: explicitBase, keepingConflicts: keepingConflicts) }
    }

    private func applyInOrder(_ snapshot: AggregateSnapshot<A>, sequence: UInt64, base explicitBase: A?, keepingConflicts: Bool) -> [String] {
        var conflicts: [String] = []
        let (base, newChildren) = lock.withLock { () -> (A?, Bool) in
            guard sequence > lastApplied, writes.lifecycle == .live else { return (nil, false) }
            lastApplied = sequence
            defer { committed = snapshot }
            return (explicitBase ?? committed.value, Set(committed.childVersions.keys) != Set(snapshot.childVersions.keys))
        }
        guard let base else { return [] }
        if newChildren { childrenChanged(Array(snapshot.childVersions.keys)) }
        var leftToWrite = false
        value.modifyIfChanged(author: .database) { current in
            let merged: A
            if current == base {
                merged = snapshot.value
            } else if let result = try? AggregateMerge.merge(base: base, mine: current, theirs: snapshot.value, keepingConflicts: keepingConflicts) {
                (merged, conflicts) = result
            } else {
                merged = snapshot.value
            }
            leftToWrite = merged != snapshot.value
            guard merged != current else { return false }
            current = merged
            return true
        }
        // After the value's lock is released (lock order); starts a loop if none is running.
        if leftToWrite, lock.withLock({ writes.edited() }) == true {
            Task { await self.writeLoop() }
        }
        return conflicts
    }

    private func revert() {
        let row = lock.withLock {
            writes.isDirty = false
            return committed.value
        }
        value.modifyIfChanged(author: .revert) { current in
            guard current != row else { return false }
            current = row
            return true
        }
    }

    private func fail(_ error: LiveRecordError) {
        lock.withLock { writes.failures.append(error) }
        report(error)
    }

    // MARK: - Remote changes

    /// Applies an aggregate re-read after an announcement, read as number `sequence`.
    func applyRemote(_ snapshot: AggregateSnapshot<A>, sequence: UInt64) {
        let (isClean, inFlight, isSame) = lock.withLock {
            (writes.isClean, writes.hasWriteInFlight, committed.hasSameVersions(as: snapshot))
        }
        guard !isSame else { return lock.withLock { lastApplied = max(lastApplied, sequence) } }
        // Unwritten edits of rows the other writer changed too are conflicts; a write under
        // way settles its own through the version check.
        let keepConflicts = isClean || inFlight || policy == .localWins
        let mine = value.read()
        let conflicts = apply(snapshot, sequence: sequence, keepingConflicts: keepConflicts)
        guard !conflicts.isEmpty, !inFlight else { return }
        let conflict = LiveRecordError.conflict(table: table.qualifiedName, key: keyText, columns: conflicts,
                                                ours: mine, theirs: snapshot.value, policy: policy)
        policy == .localWins ? report(conflict) : fail(conflict)
    }

    /// The root row is gone (and with it, by cascade, the children).
    func markDeleted() {
        guard lock.withLock({ writes.delete() }) else { return }
        value.modifyIfChanged(author: .deletion) { _ in true }
    }
}
