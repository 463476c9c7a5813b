@testable import Repository
import Testing

/// Single transitions of the sync state machine that the exhaustive search covers too, spelled
/// out as examples: what the store does with announcements while its own write is under way.
@Suite("Sync state machine: own-write announcements")
struct SyncStateExampleTests {
    typealias State = SyncState<TwoColumnContent>

    /// A row at version 1, with the edit `a = 1` sent as a write (after reads up to number 1).
    func writing() -> State {
        var state = State(table: "t", key: "1", policy: .databaseWins, committed: Committed(value: TwoColumns(a: 0, b: 0), version: 1), sequence: 1)
        _ = state.edit(to: TwoColumns(a: 1, b: 0), readsStarted: 1)
        _ = state.nextWrite(readsStarted: 1)
        return state
    }

    /// A version as the database gives them: a transaction id, unrelated to the one before.
    static let ours: Int64 = 7_301

    @Test("an update announced while our write is under way is not read; the write's result at that version settles it")
    func heldThenWritten() {
        var state = writing()
        let held = !state.announced(.update, version: Self.ours)
        #expect(held)
        let effects = state.writeSucceeded(Committed(value: TwoColumns(a: 1, b: 0), version: Self.ours), sequence: 2, isWriteResult: true)
        #expect(!effects.reread)
        #expect(state.committed.version == Self.ours)
    }

    @Test("an update announced after our write's own, while it is under way, is read once the write settles")
    func laterAnnouncementIsRead() {
        var state = writing()
        let held = [!state.announced(.update, version: Self.ours), !state.announced(.update, version: 12)]
        #expect(held == [true, true])
        let effects = state.writeSucceeded(Committed(value: TwoColumns(a: 1, b: 0), version: Self.ours), sequence: 2, isWriteResult: true)
        #expect(effects.reread)
    }

    @Test("updates to two versions announced while our write is under way: read once it settles, even at the last one")
    func severalAnnouncementsAreRead() {
        var state = writing()
        let held = [!state.announced(.update, version: 12), !state.announced(.update, version: Self.ours)]
        #expect(held == [true, true])
        let effects = state.writeSucceeded(Committed(value: TwoColumns(a: 1, b: 0), version: Self.ours), sequence: 2, isWriteResult: true)
        #expect(effects.reread)
    }

    @Test("a delete or an insert is read at once, write or not; an update is, with no write under way")
    func otherAnnouncementsAreRead() {
        var state = writing()
        let read = [state.announced(.delete, version: 2), state.announced(.insert, version: 2)]
        #expect(read == [true, true])
        var idle = State(table: "t", key: "1", policy: .databaseWins, committed: Committed(value: TwoColumns(a: 0, b: 0), version: 1), sequence: 1)
        let idleReads = [idle.announced(.update, version: 3), idle.announced(.update, version: 1)]
        #expect(idleReads == [true, false])
    }

    @Test("a held announcement is read once the write fails: it was another writer's")
    func heldThenFailed() {
        var state = writing()
        let held = !state.announced(.update, version: Self.ours)
        #expect(held)
        let effects = state.writeFailed(.writeFailed(table: "t", key: "1", PostgresError(.connectionLost, "connection lost")))
        #expect(effects.reread)
    }

    @Test("a write's result after a read that started once the write was sent: which is newer is unknown, so read again")
    func ambiguousWriteResult() {
        var state = writing()
        _ = state.applyRead(Committed(value: TwoColumns(a: 0, b: 5), version: 3), sequence: 2)
        let effects = state.writeSucceeded(Committed(value: TwoColumns(a: 1, b: 0), version: 2), sequence: 3, isWriteResult: true)
        #expect(effects.reread)
    }

    @Test("a read applied before the write's result that shows just that result: no second read")
    func readShowedTheResult() {
        var state = writing()
        let result = Committed<TwoColumnContent>(value: TwoColumns(a: 1, b: 0), version: 2)
        _ = state.applyRead(result, sequence: 2)
        #expect(!state.writeSucceeded(result, sequence: 3, isWriteResult: true).reread)
    }

    @Test("the server stores a written column otherwise (a real rounds, a trigger rewrites): a later edit of it, made meanwhile, is written, not a conflict")
    func laterEditOverAStoredForm() {
        var state = writing()
        _ = state.edit(to: TwoColumns(a: 2, b: 0), readsStarted: 1)
        // The write sent a = 1; the server stored 100 (nothing committed between its base and it).
        let effects = state.writeSucceeded(Committed(value: TwoColumns(a: 100, b: 0), version: Self.ours), sequence: 2, isWriteResult: true)
        #expect(effects.reports.isEmpty)
        #expect(state.value.a == 2)
        let next = state.nextWrite(readsStarted: 2).0
        #expect(next?.fields == ["a"])
        #expect(next?.snapshot.a == 2)
        #expect(next?.base.value.a == 100)
    }

    @Test("the same later edit, when a read shows another writer changed the column after that stored form, is a conflict")
    func laterEditOverAnotherWriter() {
        var state = writing()
        _ = state.edit(to: TwoColumns(a: 2, b: 0), readsStarted: 1)
        _ = state.writeSucceeded(Committed(value: TwoColumns(a: 100, b: 0), version: Self.ours), sequence: 2, isWriteResult: true)
        let effects = state.applyRead(Committed(value: TwoColumns(a: 50, b: 0), version: 9), sequence: 3)
        guard case .conflict(_, _, let columns, _, _, .databaseWins)? = effects.reports.first else {
            Issue.record("no conflict reported: \(effects.reports)")
            return
        }
        #expect(columns == ["a"])
        #expect(state.value.a == 50)
    }

    @Test("a row read at the version our write returned is applied, not taken as the same row: its transaction may have changed it again after (an AFTER trigger)")
    func readAtOurWritesVersion() {
        var state = writing()
        _ = state.writeSucceeded(Committed(value: TwoColumns(a: 1, b: 0), version: Self.ours), sequence: 2, isWriteResult: true)
        #expect(state.confirmRead(version: Self.ours, sequence: 3) == nil)
        let effects = state.applyRead(Committed(value: TwoColumns(a: 1, b: 5), version: Self.ours), sequence: 3)
        #expect(state.value.b == 5 && effects.publish != nil)
        // Read once applied, the same version is the same row again.
        #expect(state.confirmRead(version: Self.ours, sequence: 4) != nil)
        // A read that started before the write's result, at its version, is read again.
        var older = writing()
        _ = older.writeSucceeded(Committed(value: TwoColumns(a: 1, b: 0), version: Self.ours), sequence: 3, isWriteResult: true)
        #expect(older.applyRead(Committed(value: TwoColumns(a: 1, b: 5), version: Self.ours), sequence: 2).reread)
    }

    @Test("a conflict lost while a later edit of the column waited reports that later value as ours: it is lost too")
    func conflictReportsTheLatestValue() {
        var state = writing()
        _ = state.edit(to: TwoColumns(a: 2, b: 0), readsStarted: 1)
        let effects = state.writeConflicted(theirs: Committed(value: TwoColumns(a: 9, b: 0), version: 2), sequence: 2)
        guard case .conflict(_, _, let columns, let ours, _, .databaseWins)? = effects.reports.first else {
            Issue.record("no conflict reported: \(effects.reports)")
            return
        }
        #expect(columns == ["a"])
        #expect((ours as? TwoColumns)?.a == 2)
        #expect(state.value.a == 9)
    }

    @Test("a row from the stream numbered before a read already applied is refused and read again, though the state holds the stream's previous version")
    func streamedRowOlderThanARead() {
        var state = State(table: "t", key: "1", policy: .databaseWins, committed: Committed(value: TwoColumns(a: 0, b: 0), version: 1), sequence: 1)
        let first = StreamedVersion(epoch: 1, version: 1)
        _ = state.streamed(.update, version: 1, at: first, row: nil, sequence: 2)
        // A read numbered 5 shows the row at version 1 still: the stream's marker and the state agree.
        _ = state.applyRead(Committed(value: TwoColumns(a: 0, b: 0), version: 1), sequence: 5)
        #expect(state.takesStreamed(at: StreamedVersion(epoch: 1, version: 2)))
        // The stream's next row, chosen by a route numbered 4, before that read started.
        let older = state.streamed(.update, version: 2, at: StreamedVersion(epoch: 1, version: 2),
                                   row: Committed(value: TwoColumns(a: 2, b: 0), version: 2), sequence: 4)
        #expect(!older.taken && older.stale)
        #expect(state.committed.value == TwoColumns(a: 0, b: 0))
        // Numbered after it, the same row is taken.
        var later = State(table: "t", key: "1", policy: .databaseWins, committed: Committed(value: TwoColumns(a: 0, b: 0), version: 1), sequence: 1)
        _ = later.streamed(.update, version: 1, at: first, row: nil, sequence: 2)
        let taken = later.streamed(.update, version: 2, at: StreamedVersion(epoch: 1, version: 2),
                                   row: Committed(value: TwoColumns(a: 2, b: 0), version: 2), sequence: 6)
        #expect(taken.taken && later.committed.value == TwoColumns(a: 2, b: 0))
    }
}
