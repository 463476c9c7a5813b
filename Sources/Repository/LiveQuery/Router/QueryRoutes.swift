/// Which live queries over one table a changed row may concern, and the work waiting for them —
/// a plain value, kept under its router's lock.
///
/// A query whose condition is evaluated here is indexed by the equality its rows all satisfy
/// (`owner = $1`: the owner's value leads to it), or else scanned; one whose condition only
/// the server can check is checked for every changed row, by one statement for all of them.
/// A changed row's candidates are the queries its values lead to, those scanned, those the
/// server checks, and those that hold it now (it may have left them): finding them costs what
/// the queries concerned cost, not what all of them do.
@usableFromInline
package struct QueryRoutes<ID: Hashable & Sendable>: Sendable {
    package init() {}

    @usableFromInline package typealias QueryID = ObjectIdentifier

    /// How a query's membership is decided.
    @usableFromInline package enum Check: Sendable {
        case here(CompiledCondition)
        case server
    }

    @usableFromInline private(set) var checks: [QueryID: Check] = [:]
    /// Column → value → the queries whose rows all hold that value there.
    @usableFromInline private(set) var index: [String: [ConditionValue: Set<QueryID>]] = [:]
    @usableFromInline private(set) var scanned: Set<QueryID> = []
    /// In registration order: their columns in the statement that reads changed rows.
    @usableFromInline private(set) var serverChecked: [QueryID] = []
    /// Which queries hold which rows, and the reverse.
    @usableFromInline private(set) var holders: [ID: Set<QueryID>] = [:]
    @usableFromInline private(set) var held: [QueryID: Set<ID>] = [:]

    @usableFromInline private(set) var pendingKeys: Set<ID> = []
    /// The latest change of each pending key, when the replication stream carried its row
    /// whole: such a row may be routed as it is, with no read. A later change of the row that
    /// the stream did not carry whole (or a notification) drops it, and the row is read.
    @usableFromInline private(set) var streamed: [ID: Change] = [:]
    @usableFromInline private(set) var fullRuns: Set<QueryID> = []
    /// Queries whose last whole run failed (their condition failed on some row, say): they run
    /// whole again with the next change of the table — the one that may have fixed that row —
    /// since until one succeeds, the rows of the statement that failed them are not theirs.
    @usableFromInline private(set) var failedRuns: Set<QueryID> = []
    @usableFromInline private(set) var isRunning = false

    /// The columns some query is indexed by.
    var indexedColumns: [String] { Array(index.keys) }

    // MARK: - Queries

    /// A new query, to be run whole first; true when the caller must start the loop.
    package mutating func add(_ query: QueryID, _ check: Check) -> Bool {
        checks[query] = check
        switch check {
        case .server: serverChecked.append(query)
        case .here(let condition):
            if let (column, values) = condition.equality {
                for value in values { index[column, default: [:]][value, default: []].insert(query) }
            } else {
                scanned.insert(query)
            }
        }
        fullRuns.insert(query)
        return start()
    }

    /// A query that is gone.
    mutating func remove(_ query: QueryID) {
        guard let check = checks.removeValue(forKey: query) else { return }
        switch check {
        case .server: serverChecked.removeAll { $0 == query }
        case .here(let condition):
            if let (column, values) = condition.equality {
                for value in values {
                    index[column]?[value]?.remove(query)
                    if index[column]?[value]?.isEmpty == true { index[column]?[value] = nil }
                }
                if index[column]?.isEmpty == true { index[column] = nil }
            }
            scanned.remove(query)
        }
        for id in held.removeValue(forKey: query) ?? [] {
            holders[id]?.remove(query)
            if holders[id]?.isEmpty == true { holders[id] = nil }
        }
        fullRuns.remove(query)
        failedRuns.remove(query)
    }

    // MARK: - Work

    /// Rows with these keys were announced; true when the caller must start the loop.
    mutating func announce(_ ids: some Sequence<ID>) -> Bool {
        announce(ids.lazy.map { (id: $0, change: nil) })
    }

    /// Rows with these keys changed, in this order (`change` nil: a bare announcement); true
    /// when the caller must start the loop.
    @inlinable mutating func announce(_ changes: some Sequence<(id: ID, change: Change?)>) -> Bool {
        for (id, change) in changes {
            pendingKeys.insert(id)
            streamed[id] = change?.row == nil ? nil : change
        }
        guard !pendingKeys.isEmpty else { return false }
        fullRuns.formUnion(failedRuns)
        failedRuns = []
        return start()
    }

    /// After an outage: every query runs whole, then the rows with these keys are routed (see
    /// ``RecordQueryRouter/resync(_:)``); true when the caller must start the loop.
    mutating func resync(_ ids: some Sequence<ID>) -> Bool {
        let runs = rerunAll()
        let keys = announce(ids)
        return runs || keys
    }

    /// Every query must run whole again (the feed reconnected, a table was truncated).
    mutating func rerunAll() -> Bool {
        fullRuns.formUnion(checks.keys)
        failedRuns = []
        return fullRuns.isEmpty ? false : start()
    }

    /// The queries to run whole first — then the keys to route for all queries, with the
    /// streamed changes of some of them; nil when there is nothing left (the loop ends). After
    /// whole runs, which read the table as it is now, no streamed row is routed: an older one
    /// would land on top of them, and after a `TRUNCATE` or a new slot no later change may come
    /// to set it right. Those keys are read.
    mutating func next() -> (fullRuns: [QueryID], keys: [ID], streamed: [ID: Change])? {
        guard !fullRuns.isEmpty || !pendingKeys.isEmpty else {
            isRunning = false
            return nil
        }
        defer { (fullRuns, pendingKeys, streamed) = ([], [], [:]) }
        return (Array(fullRuns), Array(pendingKeys), fullRuns.isEmpty ? streamed : [:])
    }

    /// `query` runs whole next; true when the caller must start the loop.
    mutating func rerun(_ query: QueryID) -> Bool {
        guard checks[query] != nil else { return false }
        fullRuns.insert(query)
        return start()
    }

    /// `query`'s whole run failed: it runs whole again with the table's next change.
    package mutating func runFailed(_ query: QueryID) {
        guard checks[query] != nil else { return }
        failedRuns.insert(query)
    }

    @usableFromInline mutating func start() -> Bool {
        defer { isRunning = true }
        return !isRunning
    }

    // MARK: - Routing

    /// Each query a row with key `id` may enter or leave, and whether the row is a member of it
    /// now: nil when the query's condition reads a column `row` could not read (the query must
    /// run whole). `row` is nil for a row that is gone: it leaves the queries that hold it. The
    /// queries the server checks take their answer from `server`; those it has none for
    /// (registered after the statement was made: their first run reads the row) are left out.
    @inlinable package func verdicts(for id: ID, row: inout (some ConditionRow)?, server: [QueryID: Bool]) -> [(query: QueryID, member: Bool?)] {
        var verdicts: [(query: QueryID, member: Bool?)] = []
        forEachVerdict(for: id, row: &row, server: server) { verdicts.append(($0, $1)) }
        return verdicts
    }

    /// ``verdicts(for:row:server:)`` one at a time, with no array (or set) made for the row:
    /// this runs for every changed row.
    @inlinable package func forEachVerdict(for id: ID, row: inout (some ConditionRow)?, server: [QueryID: Bool],
                                           _ body: (QueryID, Bool?) -> Void) {
        let holding = holders[id] ?? []
        guard row != nil else { return holding.forEach { body($0, false) } }
        /// A query's verdict on the row, if it has one.
        func decide(_ query: QueryID) {
            switch checks[query] {
            case .here(let condition)?:
                let member = condition.matches { row?.value(of: $0) }
                body(query, condition.columns.isDisjoint(with: row?.unreadable ?? []) ? member : nil)
            case .server?:
                if let member = server[query] { body(query, member) }
            case nil:
                return
            }
        }
        // Each candidate once: those holding the row, those scanned, those its values lead to.
        for query in holding { decide(query) }
        for query in scanned where !holding.contains(query) { decide(query) }
        var led: Set<QueryID> = []
        for (column, byValue) in index {
            guard let key = row?.value(of: column)?.indexKey, let queries = byValue[key] else { continue }
            for query in queries where !holding.contains(query) && !scanned.contains(query) && led.insert(query).inserted { decide(query) }
        }
        for query in serverChecked where !holding.contains(query) {
            if let member = server[query] { body(query, member) }
        }
    }

    /// After `query` applied a read that checked `checked` (nil: ran whole) and found
    /// `matching` among them: who holds what.
    @inlinable package mutating func record(_ query: QueryID, checked: [ID]?, matching: Set<ID>) {
        guard checks[query] != nil else { return }
        let left = checked.map { Set($0).subtracting(matching) } ?? held[query, default: []].subtracting(matching)
        for id in left {
            held[query]?.remove(id)
            holders[id]?.remove(query)
            if holders[id]?.isEmpty == true { holders[id] = nil }
        }
        for id in matching {
            held[query, default: []].insert(id)
            holders[id, default: []].insert(query)
        }
    }
}
