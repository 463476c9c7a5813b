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

    @Test("a refused edit does not settle the edits before it: save() waits for their write, then throws the refusal")
    func refusalWaitsForEarlierWrites() {
        var state = fresh()
        _ = state.edit(to: TwoColumns(a: 1, b: 0), readsStarted: 1, editor: ada)
        _ = state.nextWrite(readsStarted: 1)  // a = 1 is being written
        _ = state.refuse(PostgresError(.invalidParameter, "not storable"), editor: ada)
        #expect(state.save(1, editor: ada).wake.isEmpty)  // waits: a = 1 is not committed yet
        let woken = state.writeSucceeded(Committed(value: TwoColumns(a: 1, b: 0), version: 2), sequence: 2, isWriteResult: true).wake
        #expect(woken.map(\.ticket) == [1] && woken.first?.failure != nil)  // then the refusal is thrown
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

    @Test("failures kept only for tasks that do not come back: the newest are kept (failuresKept)")
    func bounded() {
        var state = failedEdit(by: ada)
        for value in 2...(SaveLedger.failuresKept + 5) {
            _ = state.edit(to: TwoColumns(a: value, b: 0), readsStarted: 1, editor: Editor(task: 100 + value))
            _ = state.nextWrite(readsStarted: 1)
            _ = state.writeFailed(.writeFailed(table: "t", key: "1", PostgresError(.connectionLost, "connection lost")))
        }
        #expect(throwsOnSave(&state, 1, by: linus))  // all open: the oldest is thrown, and all are closed
        #expect(!throwsOnSave(&state, 2, by: ada))  // closed and kept for their tasks: ada's, the oldest, is forgotten
        #expect(throwsOnSave(&state, 3, by: Editor(task: 100 + SaveLedger.failuresKept + 5)))
    }

    /// The write under way fails with a lost connection.
    func failWrite(_ state: inout State) -> [(ticket: Int, failure: LiveRecordError?)] {
        _ = state.nextWrite(readsStarted: 1)
        return state.writeFailed(.writeFailed(table: "t", key: "1", PostgresError(.connectionLost, "connection lost"))).wake
    }

    func fresh() -> State {
        State(table: "t", key: "1", policy: .databaseWins, committed: Committed(value: TwoColumns(a: 0, b: 0), version: 1), sequence: 1)
    }

    @Test("setting a column to the value another task's unsaved edit gave it: the task is told when that edit fails")
    func sameValueAgain() {
        var state = fresh()
        _ = state.edit(to: TwoColumns(a: 1, b: 0), readsStarted: 1, editor: grace)
        let (changed, _) = state.edit(to: TwoColumns(a: 1, b: 0), readsStarted: 1, editor: ada)
        #expect(!changed)  // changes nothing: observers are not told, yet ada's save() waits for a = 1
        _ = failWrite(&state)
        #expect(throwsOnSave(&state, 1, by: linus))  // the next caller
        #expect(throwsOnSave(&state, 2, by: ada))  // a = 1 was hers too
        #expect(throwsOnSave(&state, 3, by: grace))
    }

    @Test("a task's own failure is thrown before another task's that is still open")
    func ownFailureFirst() {
        var state = fresh()
        _ = state.edit(to: TwoColumns(a: 0, b: 1), readsStarted: 1, editor: grace)
        _ = failWrite(&state)  // grace's b = 1 failed: open
        _ = state.edit(to: TwoColumns(a: 2, b: 0), readsStarted: 1, editor: ada)
        _ = state.nextWrite(readsStarted: 1)
        _ = state.writeFailed(.writeFailed(table: "t", key: "1", PostgresError(.server, "a constraint")))
        let wake = state.save(1, editor: ada).wake
        guard case .writeFailed(_, _, let error)? = wake.first?.failure else {
            Issue.record("ada's save returned")
            return
        }
        #expect(error.message == "a constraint")
        #expect(throwsOnSave(&state, 2, by: grace))  // hers is still hers to be told
    }

    @Test("a task told of a failure is not told again when another task's later edit was lost with it")
    func toldOnce() {
        var state = fresh()
        _ = state.edit(to: TwoColumns(a: 1, b: 0), readsStarted: 1, editor: ada)
        _ = state.save(1, editor: ada)
        _ = state.edit(to: TwoColumns(a: 1, b: 2), readsStarted: 1, editor: grace)
        let woken = failWrite(&state)  // both edits lost together
        #expect(woken.count == 1 && woken[0].failure != nil)
        #expect(throwsOnSave(&state, 2, by: grace))
        _ = state.edit(to: TwoColumns(a: 3, b: 0), readsStarted: 1, editor: ada)
        let (write, _) = state.nextWrite(readsStarted: 1)
        _ = state.writeSucceeded(Committed(value: TwoColumns(a: 3, b: 0), version: 2), sequence: 2, isWriteResult: true)
        #expect(write != nil)
        #expect(!throwsOnSave(&state, 3, by: ada))
    }
}

