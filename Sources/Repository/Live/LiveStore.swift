/// One live row: the value all its handles share, the committed row behind it, and the
/// write-through of local changes.
///
/// Local changes (any author but ``Author/database``, ``Author/revert`` and ``Author/deletion``)
/// mark the store dirty; one write loop at a time persists them in order, coalescing bursts.
final class LiveStore<R: Record>: VarPersistence, @unchecked Sendable {
    // @unchecked: every `var` below is read and written only under `lock`. Lock order:
    // this lock, then the value's; never the other way round.
    let id: R.ID
    let table: RecordTable<R>
    let value: VarStore<R>
    private let policy: ConflictPolicy
    private let report: @Sendable (LiveRecordError) -> Void
    private let lock = Lock()
    private var committed: R
    private var version: Int64
    private var writes = WriteState()
    /// The value the write under way is writing, if one is.
    private var inFlight: R?
    private var subscription: Subscription?

    init(id: R.ID, record: R, version: Int64, table: RecordTable<R>, policy: ConflictPolicy,
         report: @escaping @Sendable (LiveRecordError) -> Void) {
        self.id = id
        self.table = table
        self.committed = record
        self.version = version
        self.policy = policy
        self.report = report
        self.value = VarStore(record)
        subscription = value.subscribe(initial: false) { [weak self] update in self?.localChange(update) }
    }

    var keyText: String { LiveRepository.keyText(id) }
    var state: LiveState { lock.withLock { writes.lifecycle } }
    var knownVersion: Int64 { lock.withLock { version } }

    /// A new handle onto the shared value.
    func handle() -> Var<R> { Var(store: value, persistence: self) }

    func save() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            if let result = lock.withLock({ writes.save(continuation) }) { continuation.resume(with: result) }
        }
    }

    // MARK: - Local changes

    private func localChange(_ update: Update<R>) {
        guard !update.author.isFromDatabase else { return }
        let (startWriting, deletedRow) = lock.withLock { () -> (Bool, R?) in
            guard let start = writes.edited() else { return (false, committed) }
            return (start, nil)
        }
        if let deletedRow {
            value.modifyIfChanged(author: .revert) { $0 = deletedRow; return true }
            fail(.deleted(table: table.qualifiedName, key: keyText))
        } else if startWriting {
            Task { await self.writeLoop() }
        }
    }

    private func writeLoop() async {
        while let (base, baseVersion, snapshot, editCount) = nextWrite() {
            do {
                try await write(snapshot, base: base, version: baseVersion, edits: editCount)
            } catch let error as LiveRecordError {
                fail(error)
            } catch {
                revert()
                fail(.writeFailed(table: table.qualifiedName, key: keyText, error as? PostgresError ?? PostgresError(.server, "\(error)")))
            }
        }
    }

    /// What to write next, or nil (waking `save()` callers) when everything is written.
    private func nextWrite() -> (R, Int64, R, Int)? {
        let (job, waiters, failure) = lock.withLock { () -> ((R, Int64, R, Int)?, [CheckedContinuation<Void, any Error>], (any Error)?) in
            let round = writes.nextRound()
            let job = round.edits.map { (committed, version, value.read(), $0) }
            inFlight = job?.2
            return (job, round.wake, round.failure)
        }
        waiters.resumeAll(throwing: failure)
        return job
    }

    /// Writes the properties `snapshot` changed since `base`; on a version conflict, merges.
    private func write(_ snapshot: R, base: R, version baseVersion: Int64, edits editCount: Int) async throws {
        let ours = try RecordColumns(snapshot).writableChanges(since: RecordColumns(base))
        guard !ours.isEmpty else { return }
        if let written = try await table.update(snapshot, properties: ours, expectedVersion: baseVersion) {
            return adoptWritten(written.record, version: written.version, snapshot: snapshot, edits: editCount)
        }
        // Someone else wrote first.
        guard let (theirs, theirVersion) = try await table.fetch([id]).first else {
            markDeleted()
            revert()
            throw LiveRecordError.deleted(table: table.qualifiedName, key: keyText)
        }
        // Edits made since the snapshot, still unwritten, count too: theirs came first.
        let overlap = ours.intersection(try RecordColumns(theirs).writableChanges(since: RecordColumns(base)))
            .union(try RecordColumns.collisions(current: value.read(), theirs: theirs, base: base, editsSince: base))
        let toWrite = policy == .localWins ? ours : ours.subtracting(overlap)
        adopt(theirs, version: theirVersion, keepingEditsSince: base, except: policy == .databaseWins ? overlap : [])
        if !toWrite.isEmpty {
            lock.withLock { writes.isDirty = true }  // the next round writes them on the new version
        }
        guard !overlap.isEmpty else { return }
        let conflict = LiveRecordError.conflict(table: table.qualifiedName, key: keyText, columns: overlap.sorted(),
                                                ours: snapshot, theirs: theirs, policy: policy)
        // With localWins our value is written next round: reported, but not a failure.
        if policy == .localWins { return report(conflict) }
        throw conflict
    }

    /// After our own write: with no edit since the snapshot, the row as written is the value
    /// (no merging, no encoding); otherwise keep the later edits on top of it.
    private func adoptWritten(_ record: R, version newVersion: Int64, snapshot: R, edits editCount: Int) {
        let untouched = lock.withLock { () -> Bool in
            guard writes.edits == editCount, newVersion >= version else { return false }
            committed = record
            version = newVersion
            return true
        }
        guard untouched else { return adopt(record, version: newVersion, keepingEditsSince: snapshot) }
        value.modifyIfChanged(author: .database) { current in
            guard hasChanged(current, record) else { return false }
            current = record
            return true
        }
    }

    /// Makes `record` (at `version`) the committed row, and the handle's value `record` plus
    /// the local edits made since `reference` — except `dropped` properties.
    private func adopt(_ record: R, version newVersion: Int64, keepingEditsSince reference: R, except dropped: Set<String> = []) {
        lock.withLock {
            guard newVersion >= version else { return }
            committed = record
            version = newVersion
        }
        value.modifyIfChanged(author: .database) { current in
            guard let edits = try? RecordColumns(current).writableChanges(since: RecordColumns(reference)).subtracting(dropped),
                  let next = try? record.taking(edits, from: current),
                  let changed = try? !RecordColumns(next).changedProperties(since: RecordColumns(current)).isEmpty,
                  changed
            else { return false }
            current = next
            return true
        }
    }

    /// Drops every local edit: the handle shows the committed row again.
    private func revert() {
        let row = lock.withLock {
            writes.isDirty = false
            return committed
        }
        value.modifyIfChanged(author: .revert) { current in
            guard let changed = try? !RecordColumns(row).changedProperties(since: RecordColumns(current)).isEmpty, changed else { return false }
            current = row
            return true
        }
    }

    private func fail(_ error: LiveRecordError) {
        lock.withLock { writes.failures.append(error) }
        report(error)
    }

    // MARK: - Remote changes

    /// Applies a row re-read after a change announcement, if it is newer than what we have.
    func applyRemote(_ record: R, version newVersion: Int64) {
        let (isNewer, isClean, writing, base) = lock.withLock { () -> (Bool, Bool, R?, R) in
            let isNewer = newVersion > version && writes.lifecycle == .live
            let isClean = writes.isClean
            if isNewer, isClean {
                committed = record
                version = newVersion
            }
            return (isNewer, isClean, writes.hasWriteInFlight ? inFlight : nil, committed)
        }
        guard isNewer else { return }
        guard isClean else { return adoptWhileEditing(record, version: newVersion, base: base, unwrittenSince: writing ?? base) }
        // No local edits to keep: take the row as it is (no encoding needed).
        value.modifyIfChanged(author: .database) { current in
            guard hasChanged(current, record) else { return false }
            current = record
            return true
        }
    }

    /// A newer row arrived while local edits wait: they stay on top of it, except unwritten
    /// edits (those since `reference`: the base, or the value a write under way is writing)
    /// of columns the other writer set to something else — a conflict, settled by the policy.
    /// The write under way settles its own conflicts through its version check, and this row
    /// may be its echo: a column it holds as that write wrote it is no conflict.
    private func adoptWhileEditing(_ record: R, version newVersion: Int64, base: R, unwrittenSince reference: R) {
        let current = value.read()
        let overlap = (try? RecordColumns.collisions(current: current, theirs: record, base: base, editsSince: reference)) ?? []
        adopt(record, version: newVersion, keepingEditsSince: base, except: policy == .databaseWins ? overlap : [])
        guard !overlap.isEmpty else { return }
        let conflict = LiveRecordError.conflict(table: table.qualifiedName, key: keyText, columns: overlap.sorted(),
                                                ours: current, theirs: record, policy: policy)
        policy == .localWins ? report(conflict) : fail(conflict)
    }

    /// The row is gone: say so, with an update that leaves the value as it was.
    func markDeleted() {
        let wasLive = lock.withLock { writes.delete() }
        guard wasLive else { return }
        value.modifyIfChanged(author: .deletion) { _ in true }
    }
}
