import Foundation
@testable import Repository

/// A row of two integer columns, as the sync engine sees it (no database, no encoding).
struct TwoColumns: Equatable, Sendable {
    var a: Int
    var b: Int

    subscript(field: String) -> Int {
        get { field == "a" ? a : b }
        set { if field == "a" { a = newValue } else { b = newValue } }
    }
}

enum TwoColumnContent: SyncContent {
    static func fields(changedFrom old: TwoColumns, to new: TwoColumns) -> Set<String> {
        differing(old, new, among: ["a", "b"])
    }

    static func differing(_ x: TwoColumns, _ y: TwoColumns, among fields: Set<String>) -> Set<String> {
        fields.filter { x[$0] != y[$0] }
    }

    static func replacing(_ fields: Set<String>, in target: TwoColumns, from source: TwoColumns) -> TwoColumns {
        var result = target
        for field in fields { result[field] = source[field] }
        return result
    }

    static func differs(_ x: TwoColumns, _ y: TwoColumns) -> Bool { x != y }
    static func name(of field: String) -> String { field }
    static func rowVersion(_ version: Int64) -> Int64 { version }
    /// Writes succeed only at their base's version, as a record's do.
    static var writeCommitsRightAfterBase: Bool { true }
}

/// One live row and the database behind it, stepped event by event: a model of everything
/// that happens to a ``SyncState`` — local edits, `save()`, another writer's commits,
/// deletes and inserts, announcements, reads that run and arrive in any order, and the
/// write loop — with the checks the contract asks for.
struct SyncSimulation {
    typealias State = SyncState<TwoColumnContent>

    enum Event: CaseIterable {
        case editA, editB, commitA, commitB, delete, insert, announce, executeRead, deliverRead, writeStep, failWrite, save, reconnect
    }

    /// A read: numbered when it starts, sees the database when it executes, applied on arrival.
    struct Read {
        let sequence: UInt64
        var snapshot: Committed<TwoColumnContent>??
        let forConflict: Bool
    }

    enum WriteStage {
        case taken(State.Write)
        case executed(State.Write, Committed<TwoColumnContent>?)  // nil: conflict
    }

    private(set) var state: State
    // The database.
    private(set) var row: TwoColumns?
    private var version: Int64 = 1
    /// Transactions committed so far, for the next version.
    private var transactions: Int64 = 1
    private var clock = 0
    /// Every committed value of a column: who wrote it, when.
    private(set) var commits: [(field: String, value: Int, ours: Bool, time: Int)] = [("a", 0, false, 0), ("b", 0, false, 0)]
    /// Announcements not yet received, in commit order: what happened, the version after, and
    /// the row it left (which the replication stream delivers with inserts and updates).
    private var announcements: [(operation: Change.Operation, version: Int64, row: TwoColumns?)] = []
    /// Whether changes come from the replication stream, rows and all (see ``SyncState/streamed(_:version:at:row:sequence:)``).
    let streams: Bool
    /// The stream's slot: a reconnection starts a new one.
    private var epoch: UInt64 = 1
    /// Each version's place in commit order.
    private var commitOrder: [Int64: Int64] = [1: 1]
    // The process.
    private var sequence: UInt64 = 1
    private var reads: [Read] = []
    private var write: WriteStage?
    private var isWriting = false
    /// Local edits the state accepted: the field, the value, whether a write was needed, the
    /// task that made it, and from when the database must hold the value for the edit to count
    /// as done (nil: it changed nothing and set no local edit again).
    private(set) var edits: [(field: String, value: Int, time: Int, pending: Bool, editor: Editor, wantedFrom: Int?)] = []
    private(set) var reports: [(error: LiveRecordError, time: Int)] = []
    private var saves: [Int: (edits: Int, time: Int, editor: Editor)] = [:]
    private(set) var resolvedSaves: [(ticket: Int, failure: LiveRecordError?, called: Int, time: Int, editor: Editor)] = []
    private(set) var violations: [String] = []
    /// What happened, step by step, when `SYNC_TRACE` is set (for reading a failure).
    private(set) var trace: [String] = []
    static let isTracing = ProcessInfo.processInfo.environment["SYNC_TRACE"] != nil

    init(policy: ConflictPolicy, streams: Bool = false) {
        self.streams = streams
        let start = TwoColumns(a: 0, b: 0)
        row = start
        state = State(table: "t", key: "1", policy: policy, committed: Committed(value: start, version: 1), sequence: 1)
    }

    // MARK: - Events

    /// Edits and saves come from two tasks: value 0's, and the others'.
    static func editor(_ value: Int) -> Editor { Editor(task: value == 0 ? 0 : 1) }

    mutating func step(_ event: Event, value: Int) {
        clock += 1
        switch event {
        case .editA, .editB:
            let field = event == .editA ? "a" : "b"
            var new = state.value
            new[field] = value
            // Setting a column to the value it shows is no edit — but when that value is a local
            // edit not yet settled, the task wants it as much as the task that made it.
            let changed = state.value[field] != value
            let wantedFrom = changed ? clock : state.localFields.contains(field) ? edits.last { $0.field == field && $0.pending }?.time : nil
            let accepted = state.lifecycle == .live  // a deleted row refuses edits
            let (published, effects) = state.edit(to: new, readsStarted: sequence, editor: Self.editor(value))
            if published != changed && accepted { violations.append("an edit that \(changed ? "changed" : "did not change") the value was \(published ? "" : "not ")published") }
            if accepted { edits.append((field, value, clock, changed, Self.editor(value), wantedFrom)) }
            perform(effects)
        case .commitA, .commitB:
            guard var current = row else { return }
            let field = event == .commitA ? "a" : "b"
            current[field] = value
            commit(current, fields: [field], ours: false)
        case .delete:
            guard row != nil else { return }
            row = nil
            announcements.append((.delete, newTransaction(), nil))
        case .insert:
            guard row == nil else { return }
            row = TwoColumns(a: value, b: value)
            version = newTransaction()
            commits += ["a", "b"].map { ($0, value, false, clock) }
            announcements.append((.insert, version, row))
        case .announce:
            guard !announcements.isEmpty else { return }
            let (operation, version, streamed) = announcements.removeFirst()
            // Whether the store reads the row is the state's decision (it may hold an
            // announcement of its own write under way).
            guard streams else {
                if state.announced(operation, version: version) { startRead() }
                break
            }
            let held = state.committed.version
            sequence += 1  // numbered on arrival, like the store does
            let outcome = state.streamed(operation, version: version, at: streamed.map { _ in StreamedVersion(epoch: epoch, version: version) },
                                         row: streamed.map { Committed(value: $0, version: version) }, sequence: sequence)
            if outcome.taken, (commitOrder[version] ?? 0) < (commitOrder[held] ?? 0) {
                violations.append("a row from the stream moved the state back from version \(held) to \(version)")
            }
            if outcome.stale { startRead() }
            perform(outcome.effects)
        case .reconnect:
            if streams { epoch += 1 }  // a new slot: what the last one delivered says nothing
            startRead()
        case .executeRead:
            guard let index = reads.indices.first(where: { reads[$0].snapshot == nil }) else { return }
            reads[index].snapshot = .some(databaseRow)
        case .deliverRead:
            let ready = reads.indices.filter { reads[$0].snapshot != nil }
            guard !ready.isEmpty else { return }
            let read = reads.remove(at: ready[value % ready.count])
            let snapshot = read.snapshot!  // swiftlint:disable:this force_unwrapping
            if read.forConflict {
                perform(state.writeConflicted(theirs: snapshot, sequence: read.sequence))
            } else {
                perform(applyRead(snapshot, sequence: read.sequence))
            }
        case .writeStep:
            writeStep()
        case .failWrite:
            // The write's connection is lost before its statement ran.
            guard case .taken = write else { return }
            write = nil
            perform(state.writeFailed(.writeFailed(table: "t", key: "1", PostgresError(.connectionLost, "connection lost"))))
        case .save:
            let ticket = saves.count + resolvedSaves.count + 1
            saves[ticket] = (edits.count, clock, Self.editor(value))
            perform(state.save(ticket, editor: Self.editor(value)))
        }
        if Self.isTracing { trace.append("\(clock) \(event)(\(value)): db \(row.map { "\($0.a),\($0.b)" } ?? "-") v\(version); handle \(state.value.a),\(state.value.b) "
            + "\(state.lifecycle) committed \(state.committed.value.a),\(state.committed.value.b) v\(state.committed.version)@\(state.appliedSequence) "
            + "pending \(state.pending.keys.sorted()) inFlight \(state.inFlight?.fields.sorted() ?? []) settled \(state.settled)/\(state.edits)") }
        checkInvariants()
    }

    private var databaseRow: Committed<TwoColumnContent>? {
        row.map { Committed(value: $0, version: version) }
    }

    private mutating func commit(_ new: TwoColumns, fields: Set<String>, ours: Bool) {
        row = new
        version = newTransaction()
        commits += fields.map { ($0, new[$0], ours, clock) }
        announcements.append((.update, version, new))
    }

    /// A version as PostgreSQL gives them (the writing transaction's id, `xmin`): new for every
    /// commit, and in no particular order, so that the state machine cannot rely on one.
    private mutating func newTransaction() -> Int64 {
        transactions += 1
        let version = (transactions &* 0x9E37_79B1) & 0xFFFF_FFFF  // a bijection on 32 bits: never repeats
        commitOrder[version] = transactions
        return version
    }

    /// A read's row applied as a store applies it: a row at the version held only confirms it
    /// when it can (``SyncState/confirmRead(version:sequence:)``) — which must leave the state
    /// and ask for the effects that applying the row does.
    private mutating func applyRead(_ row: Committed<TwoColumnContent>?, sequence: UInt64) -> SyncEffects {
        var confirmed = state
        guard let row, let effects = confirmed.confirmRead(version: row.version, sequence: sequence) else {
            return state.applyRead(row, sequence: sequence)
        }
        let applied = state.applyRead(row, sequence: sequence)
        if Self.summary(confirmed, effects) != Self.summary(state, applied) {
            violations.append("confirming a read at the held version left \(Self.summary(confirmed, effects)), applying it \(Self.summary(state, applied))")
        }
        state = confirmed
        return effects
    }

    /// What a state shows of itself, and what a transition asked for.
    private static func summary(_ state: State, _ effects: SyncEffects) -> String {
        "value \(state.value) \(state.lifecycle) committed \(state.committed.value) v\(state.committed.version)@\(state.appliedSequence) "
            + "pending \(state.pending.keys.sorted()) inFlight \(state.inFlight?.fields.sorted() ?? []) settled \(state.settled)/\(state.edits) "
            + "writing \(state.isWriting) held \(String(describing: state.heldAnnouncement)) streamed \(String(describing: state.streamed)) "
            + "effects publish \(String(describing: effects.publish)) write \(effects.startWriting) reread \(effects.reread) "
            + "reports \(effects.reports.count) wake \(effects.wake.map(\.ticket))"
    }

    private mutating func startRead(forConflict: Bool = false) {
        sequence += 1
        reads.append(Read(sequence: sequence, snapshot: nil, forConflict: forConflict))
    }

    private mutating func writeStep() {
        switch write {
        case nil:
            guard isWriting else { return }
            let (next, effects) = state.nextWrite(readsStarted: sequence)
            if let next {
                write = .taken(next)
                for field in next.fields where lastEdit(of: field)?.value != next.snapshot[field] {
                    violations.append("write of \(field) carries \(next.snapshot[field]), not the last local edit")
                }
            } else {
                isWriting = false
            }
            perform(effects)
        case .taken(let job):
            guard let current = row, version == job.base.version else {
                write = .executed(job, nil)
                return
            }
            commit(TwoColumnContent.replacing(job.fields, in: current, from: job.snapshot), fields: job.fields, ours: true)
            write = .executed(job, databaseRow)
        case .executed(_, let result):
            write = nil
            if let result {
                sequence += 1  // numbered on arrival, like the store does
                let held = state.committed.version
                perform(state.writeSucceeded(result, sequence: sequence, isWriteResult: true))
                // A later commit already shown stays: the write's own result never steps it back.
                if (commitOrder[state.committed.version] ?? 0) < (commitOrder[held] ?? 0) {
                    violations.append("the write's result moved the state back from version \(held) to \(state.committed.version)")
                }
            } else {
                startRead(forConflict: true)
            }
        }
    }

    private mutating func perform(_ effects: SyncEffects) {
        reports += effects.reports.map { ($0, clock) }
        if effects.startWriting {
            if isWriting { violations.append("a second write loop was started") }
            isWriting = true
        }
        if effects.reread { startRead() }
        for (ticket, failure) in effects.wake {
            guard let save = saves.removeValue(forKey: ticket) else {
                violations.append("save \(ticket) woken twice")
                continue
            }
            resolvedSaves.append((ticket, failure, save.time, clock, save.editor))
        }
    }

    private func lastEdit(of field: String, before time: Int = .max, by editor: Editor? = nil) -> (field: String, value: Int, time: Int, pending: Bool, editor: Editor, wantedFrom: Int?)? {
        edits.last { $0.field == field && $0.time <= time && (editor == nil || $0.editor == editor) }
    }

    // MARK: - Checks

    private mutating func checkInvariants() {
        guard let expected = try? state.overlayingLocalEdits(on: state.committed.value) else {
            return violations.append("the local edits could not be laid over the committed row")
        }
        if state.value != expected { violations.append("value \(state.value) is not the committed row plus local edits \(expected)") }
        if state.pending.isEmpty, state.inFlight == nil, state.lifecycle == .live, state.value != state.committed.value {
            violations.append("no local edits, yet the value \(state.value) is not the committed \(state.committed.value)")
        }
    }

    /// Lets everything under way finish, reads once more, and checks convergence and that
    /// nothing was lost without a report.
    mutating func settle() {
        for _ in 0..<10_000 {
            if !announcements.isEmpty { step(.announce, value: 0); continue }
            if reads.contains(where: { $0.snapshot == nil }) { step(.executeRead, value: 0); continue }
            if !reads.isEmpty { step(.deliverRead, value: 0); continue }
            if write != nil || isWriting { step(.writeStep, value: 0); continue }
            break
        }
        if !reads.isEmpty || write != nil || isWriting || !announcements.isEmpty { violations.append("did not settle") }
        if let row {
            if state.lifecycle != .live || state.value != row { violations.append("did not converge: \(state.value) (\(state.lifecycle)) vs \(row)") }
        } else if state.lifecycle != .deleted {
            violations.append("the row is gone but the handle is \(state.lifecycle)")
        }
        if !saves.isEmpty { violations.append("save() never returned: \(saves.keys.sorted())") }
        checkNothingLost()
        checkSaves()
    }

    /// Each column's last local edit is committed (by anyone, after it), was a no-op on the
    /// row as this process knew it, or was reported.
    private mutating func checkNothingLost() {
        for field in ["a", "b"] {
            guard let edit = lastEdit(of: field), edit.pending else { continue }
            let committed = databaseHeld(field, edit.value, from: edit.time, to: .max)
            let reported = reports.contains { report, time in time >= edit.time && Self.names(report, field) }
            if !committed && !reported { violations.append("the edit \(field) = \(edit.value) at \(edit.time) was lost without a report") }
        }
    }

    /// A `save()` that returned without throwing: the last edit of each column made before it
    /// was called is committed by the time it returned — or superseded by a later edit of that
    /// column that is — or an earlier `save()`, called after that edit, threw its failure
    /// before this one returned. (Saves woken together all throw it: they may be different
    /// tasks', and a waiting caller cannot tell whose edit it was.) The last edit of each column
    /// its own task made before it — also one that set a local edit's value again — is committed or
    /// superseded, or an earlier `save()` of that task, called after that edit, threw (one call
    /// throws one failure) — whatever other tasks' saves threw.
    private mutating func checkSaves() {
        for (ticket, failure, called, time, editor) in resolvedSaves where failure == nil {
            for field in ["a", "b"] {
                let last = lastEdit(of: field, before: called), own = lastEdit(of: field, before: called, by: editor)
                for edit in own?.time == last?.time ? [last] : [last, own] {
                    guard let edit, let wantedFrom = edit.wantedFrom, edit.pending || edit.editor == editor else { continue }
                    let committed = databaseHeld(field, edit.value, from: wantedFrom, to: time)
                    let superseded = edits.contains { later in
                        later.field == field && later.pending && later.time > edit.time && databaseHeld(field, later.value, from: later.time, to: time)
                    }
                    // Its own edit's failure must have been thrown to its own task.
                    let thrown = resolvedSaves.contains { other in
                        other.failure != nil && other.called >= edit.time && other.time < time && other.ticket != ticket
                            && (edit.editor != editor || other.editor == editor)
                    }
                    if !committed && !superseded && !thrown {
                        violations.append("save \(ticket) (called at \(called)) returned at \(time) but \(field) = \(edit.value) "
                            + "(edited by \(edit.editor == editor ? "its task" : "another task")) was not committed")
                    }
                }
            }
        }
    }

    /// Whether the database held `value` in `field` at some moment from `start` to `end`
    /// (a row that was deleted holds nothing).
    private func databaseHeld(_ field: String, _ value: Int, from start: Int, to end: Int) -> Bool {
        let atStart = commits.last { $0.field == field && $0.time <= start }
        return atStart?.value == value || commits.contains { $0.field == field && $0.value == value && $0.time > start && $0.time <= end }
    }

    private static func names(_ report: LiveRecordError, _ field: String) -> Bool {
        switch report {
        case .conflict(_, _, let columns, _, _, _): columns.contains(field)
        case .deleted, .writeFailed: true
        default: false
        }
    }
}
