/// The write loop's transitions: the next write to send, and what became of it — committed,
/// refused for a newer version (carried over it, field by field), or failed.
extension SyncState {
    /// The write loop's next write, sent after reads up to number `readsStarted` started; nil
    /// when there is nothing to write (the loop ends).
    mutating func nextWrite(readsStarted: UInt64) -> (Write?, SyncEffects) {
        guard lifecycle == .live, hasPending, !hasInFlight else {
            isWriting = false
            return (nil, advance())
        }
        let write = Write(fields: Set(pending.keys), snapshot: value, base: committed, edits: pending, through: edits,
                          sentAfter: readsStarted, appliedWhenSent: appliedSequence)
        pending = [:]
        inFlight = write
        return (write, SyncEffects())
    }

    /// The write under way committed. `row` is the state after it: the write's own result
    /// (`isWriteResult`, numbered when it arrived) or a read made after it (nil: the row is gone).
    mutating func writeSucceeded(_ row: Committed<Content>?, sequence: UInt64, isWriteResult: Bool) -> SyncEffects {
        settlingHeldAnnouncement { sync in
            guard let write = sync.inFlight else { return SyncEffects() }
            var effects = sync.settleWrite()
            if isWriteResult, Content.writeCommitsRightAfterBase, let row { sync.buildOnStoredForm(of: write, stored: row.value) }
            guard sequence > sync.appliedSequence else { return effects + sync.rebase() }
            // A read applied since the write was sent may show a later commit than the write's
            // result does — even one that started before: a read runs some time after it is
            // numbered. Which is newer is not known (versions are transaction ids, which do not
            // tell), so read again — unless the read showed just what the result shows.
            let sameAsRead = sync.lifecycle == .live
                && row.map { $0.version == sync.committed.version && !Content.differs($0.value, sync.committed.value) } ?? false
            effects.reread = isWriteResult && sync.appliedSequence != write.appliedWhenSent && !sameAsRead
            // A write that committed right after its base: a read applied meanwhile that shows
            // neither the base nor the result — another version, or no row — saw a commit after
            // the write's. The result is the older of the two: kept out, since applied it would
            // step the value back until the re-read (which still runs, in case that read ran
            // before the base was read).
            if effects.reread, Content.writeCommitsRightAfterBase, let row, sync.lifecycle == .deleted
                || (sync.lifecycle == .live && sync.committed.version != write.base.version && sync.committed.version != row.version) {
                return effects + sync.rebase()
            }
            guard let row else { return effects + sync.delete(at: sequence) }
            return effects + sync.adopt(row, sequence: sequence, byWrite: isWriteResult, seenAfter: isWriteResult ? write.sentAfter : sequence)
        }
    }

    /// The server stored a field of `write` otherwise than it was sent — a `real` rounds a
    /// `Double`, a `BEFORE UPDATE` trigger rewrites it —, and `stored` is the write's own result,
    /// committed right after its base (nothing between them): an edit of that field made since,
    /// on the value sent, builds on what was stored, not on another writer's change. Its base
    /// becomes the stored value, so that it is written, not taken for a conflict.
    mutating func buildOnStoredForm(of write: Write, stored: Value) {
        for field in write.fields {
            guard let edit = pending[field], Content.differing(edit.base, write.snapshot, among: [field]).isEmpty else { continue }
            pending[field]?.base = stored
        }
    }

    /// The write under way committed (or had nothing to write), and the state it produced is
    /// not known yet: the value stays as it is until the next read.
    mutating func writeCommitted() -> SyncEffects {
        settlingHeldAnnouncement { $0.settleWrite() }
    }

    private mutating func settleWrite() -> SyncEffects {
        guard let write = inFlight else { return SyncEffects() }
        (inFlight, inFlightIsAbandoned) = (nil, false)
        settled = max(settled, write.through)
        return advance()
    }

    /// The write under way found the row at another version; `row` was read since (nil: the
    /// row is gone). Each field is carried over the newer state; a field the other writer
    /// changed too, to another value, is a conflict settled by the policy.
    mutating func writeConflicted(theirs row: Committed<Content>?, sequence: UInt64) -> SyncEffects {
        settlingHeldAnnouncement { $0.settleConflict(theirs: row, sequence: sequence) }
    }

    private mutating func settleConflict(theirs row: Committed<Content>?, sequence: UInt64) -> SyncEffects {
        guard let write = inFlight else { return SyncEffects() }
        let wasAbandoned = inFlightIsAbandoned
        if sequence > appliedSequence {
            guard let row else {
                let lost = wasAbandoned ? nil : lostEdits(of: localFields)
                (inFlight, inFlightIsAbandoned) = (nil, false)
                return delete(at: sequence, alsoLost: lost)
            }
            (committed, appliedSequence, committedByWrite, lifecycle) = (row, sequence, false, .live)
        }
        guard lifecycle == .live, !wasAbandoned else {
            (inFlight, inFlightIsAbandoned) = (nil, false)
            return rebase() + advance()
        }
        let theirs = committed.value
        guard committed.version != write.base.version || Content.differs(theirs, write.base.value) else {
            // Nothing changed, yet the write matched no row: it would never succeed.
            var error = PostgresError(.server, "the row is still as the write expected, but the UPDATE matched no row (a row-level security policy or a trigger may hide it)")
            error.sqlState = "40001"
            return settleFailure(.writeFailed(table: table, key: key, error))
        }
        (inFlight, inFlightIsAbandoned) = (nil, false)
        let alreadyTheirs = write.fields.subtracting(Content.differing(theirs, write.snapshot, among: write.fields))
        let changedByThem = Content.differing(theirs, write.base.value, among: write.fields).filter { field in
            write.edits[field].map { !Content.differing(theirs, $0.base, among: [field]).isEmpty } ?? true
        }
        let conflicts = changedByThem.subtracting(alreadyTheirs)
        for field in write.fields.subtracting(alreadyTheirs) {
            // Rebased on theirs: written again on the newer version (unless dropped below).
            let carried = [pending[field], write.edits[field]].compactMap { $0 }
            pending[field] = Edit(base: theirs, since: carried.map(\.since).max() ?? 0,
                                  edits: (carried.map(\.edits.lowerBound).min() ?? edits)...(carried.map(\.edits.upperBound).max() ?? edits),
                                  editors: carried.reduce(EditorEdits()) { $0.union($1.editors) })
        }
        var effects = SyncEffects()
        if !conflicts.isEmpty {
            // Ours is the value this process holds: a later edit of a conflicting column, made
            // while the write was under way, is lost (or written) with it.
            let conflict = conflictError(conflicts, ours: value, theirs: theirs)
            if policy == .databaseWins {
                let lost = lostEdits(of: conflicts)
                for field in conflicts { pending[field] = nil }
                effects = fail(conflict, lost)
            } else {
                effects.reports.append(conflict)
            }
        }
        return effects + reconcilePending(seenAfter: sequence) + rebase() + advance()
    }

    /// The write under way failed (a constraint, a lost connection): every local edit is
    /// dropped and the value returns to the committed state.
    mutating func writeFailed(_ error: LiveRecordError) -> SyncEffects {
        settlingHeldAnnouncement { $0.settleFailure(error) }
    }

    private mutating func settleFailure(_ error: LiveRecordError) -> SyncEffects {
        let fields = localFields
        let lost = lostEdits(of: fields)
        (inFlight, inFlightIsAbandoned) = (nil, false)
        pending = [:]
        // A write abandoned when the row was deleted lost its edits then, and they were reported.
        var effects = fields.isEmpty ? SyncEffects(reports: [error]) : fail(error, lost)
        if Content.differs(value, committed.value) {
            (value, showsCommitted) = (committed.value, true)
            effects.publish = .revert
        }
        settled = edits
        return effects + advance()
    }
}
