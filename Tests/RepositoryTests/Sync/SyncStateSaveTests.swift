@testable import Repository
import Testing

/// Which `save()` calls throw a failed edit, spelled out as examples (the random search of
/// ``SyncStateTests`` checks the same rules with two tasks).
@Suite("Sync state machine: which save() throws a failure")
struct SyncStateSaveTests {
    typealias State = SyncState<TwoColumnContent>
    let ada = Editor(task: 1), grace = Editor(task: 2), linus = Editor(task: 3)

    /// A row whose edit `a = 1` by `editor` was sent and failed (a lost connection).
    func failedEdit(by editor: Editor?) -> State {
        var state = State(table: "t", key: "1", policy: .databaseWins, committed: Committed(value: TwoColumns(a: 0, b: 0), version: 1), sequence: 1)
        _ = state.edit(to: TwoColumns(a: 1, b: 0), readsStarted: 1, editor: editor)
        _ = state.nextWrite(readsStarted: 1)
        _ = state.writeFailed(.writeFailed(table: "t", key: "1", PostgresError(.connectionLost, "connection lost")))
        return state
    }

    /// Whether `save()` with `ticket` by `editor` throws (it returns at once: nothing is pending).
    func throwsOnSave(_ state: inout State, _ ticket: Int, by editor: Editor?) -> Bool {
        let wake = state.save(ticket, editor: editor).wake
        #expect(wake.map(\.0) == [ticket])
        return wake.first?.1 != nil
    }

    @Test("a task's save() throws its own failed edit, also after another task's save() threw it; a third task's returns")
    func ownFailureIsThrown() {
        var state = failedEdit(by: ada)
        #expect(throwsOnSave(&state, 1, by: grace))  // the next caller: it cannot tell whose edit it was
        #expect(!throwsOnSave(&state, 2, by: linus))  // closed to others once thrown
        #expect(throwsOnSave(&state, 3, by: ada))  // the task that made the edit is told
        #expect(!throwsOnSave(&state, 4, by: ada))  // once
    }

    @Test("an edit made outside any task: the first save() after it throws it, later ones return")
    func taskless() {
        var state = failedEdit(by: nil)
        #expect(throwsOnSave(&state, 1, by: ada))
        #expect(!throwsOnSave(&state, 2, by: nil))
        #expect(!throwsOnSave(&state, 3, by: grace))
    }

    @Test("a task's edit made after its save() was called is told by its next save(), not that one")
    func laterEditToldByNextCall() {
        var state = State(table: "t", key: "1", policy: .databaseWins, committed: Committed(value: TwoColumns(a: 0, b: 0), version: 1), sequence: 1)
        _ = state.edit(to: TwoColumns(a: 1, b: 0), readsStarted: 1, editor: grace)
        _ = state.save(1, editor: ada)  // waits for grace's edit
        _ = state.edit(to: TwoColumns(a: 1, b: 2), readsStarted: 1, editor: ada)
        _ = state.nextWrite(readsStarted: 1)
        let woken = state.writeFailed(.writeFailed(table: "t", key: "1", PostgresError(.connectionLost, "connection lost"))).wake
        #expect(woken.count == 1 && woken[0].1 != nil)  // waiting when it failed
        #expect(throwsOnSave(&state, 2, by: ada))  // its edit b = 2 came after its first call
        #expect(throwsOnSave(&state, 3, by: grace))  // her own edit
        #expect(!throwsOnSave(&state, 4, by: linus))  // closed to others: thrown to a caller after all its edits
    }

    @Test("failed edits no task comes back for: only the newest are kept (failuresKept)")
    func bounded() {
        var state = failedEdit(by: ada)
        for value in 2...(SaveLedger.failuresKept + 5) {
            _ = state.edit(to: TwoColumns(a: value, b: 0), readsStarted: 1, editor: Editor(task: 100 + value))
            _ = state.nextWrite(readsStarted: 1)
            _ = state.writeFailed(.writeFailed(table: "t", key: "1", PostgresError(.connectionLost, "connection lost")))
        }
        #expect(throwsOnSave(&state, 1, by: linus))  // every failure kept is still open
        #expect(!throwsOnSave(&state, 2, by: ada))  // ada's was among the oldest, forgotten
        #expect(throwsOnSave(&state, 3, by: Editor(task: 100 + SaveLedger.failuresKept + 5)))
    }
}
