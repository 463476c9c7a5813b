/// The live result of any `SELECT` — joins, aggregates, `GROUP BY`, subqueries — read-only: run
/// again whenever one of the tables it reads is announced, and published only when the result
/// differs. Its repository routes announcements to it (``AnyLiveQuery``); it runs one query
/// at a time, and announcements arriving meanwhile make one more run (``RerunSchedule``).
final class LiveSelect<Value: Equatable & Sendable>: @unchecked Sendable {
    // @unchecked: `schedule` is a Locked value; `cell` keeps its state behind its own lock.
    let tables: Set<String>
    /// The tables as messages name them, in order (`public.orders, public.people`).
    private let shownTables: String
    private let run: @Sendable () async throws -> Value
    private let report: @Sendable (LiveRecordError) -> Void
    private let cell: VarStore<Value>
    private let schedule = Locked(RerunSchedule())
    /// The repository it belongs to, kept open while the result is held.
    private let owner: (any AnyObject & Sendable)?

    /// A result first read by `run` (whose rows are `initial`), then kept current; `tables` are
    /// the tables it follows, each with its name as messages show it; it keeps `owner`.
    init(tables: [(name: String, shown: String)], initial: Value, owner: (any AnyObject & Sendable)? = nil,
         report: @escaping @Sendable (LiveRecordError) -> Void, run: @escaping @Sendable () async throws -> Value) {
        self.owner = owner
        self.tables = Set(tables.map(\.name))
        shownTables = Set(tables.map(\.shown)).sorted().joined(separator: ", ")
        self.run = run
        self.report = report
        cell = VarStore(initial)
    }

    /// The result, read-only: its observers hear each new result. It stays live while this
    /// value, or an observation of it, is held.
    func result() -> Derived<Value> {
        Derived(read: { [self] in cell.read() }, subscribe: { [self] initial, handler in
            let subscription = cell.subscribe(initial: initial, handler)
            return Subscription { withExtendedLifetime(self) { subscription.cancel() } }
        })
    }

    /// Runs the query again soon: now if no run is under way, else once more after it.
    func rerun() {
        guard schedule.withLock({ $0.request() }) else { return }
        Task { await runLoop() }
    }

    private func runLoop() async {
        repeat {
            do {
                let value = try await run()
                cell.modifyIfChanged(author: .database) { current in
                    guard current != value else { return false }
                    current = value
                    return true
                }
            } catch {
                report(.refreshFailed(table: shownTables, error))
            }
        } while schedule.withLock({ $0.finished() })
    }
}

/// When a live result runs its query: one run at a time; requests that arrive while one runs
/// make exactly one more, after it — so a burst of changes costs at most two runs, and the
/// last run started after the last change.
struct RerunSchedule: Sendable {
    private(set) var isRunning = false
    private(set) var isRequestedAgain = false

    /// A change was announced: whether the caller must start a run (none is under way).
    mutating func request() -> Bool {
        if isRunning {
            isRequestedAgain = true
            return false
        }
        isRunning = true
        return true
    }

    /// A run ended: whether to run once more (requested while it ran).
    mutating func finished() -> Bool {
        guard isRequestedAgain else {
            isRunning = false
            return false
        }
        isRequestedAgain = false
        return true
    }
}

extension LiveSelect: AnyLiveQuery {
    var tableName: String { tables.sorted().joined(separator: ", ") }
    func follows(_ table: String) -> Bool { tables.contains(table) }
    func changed(_ changes: [Change]) { rerun() }
}
