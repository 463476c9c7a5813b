import IdentifiedCollections

/// The live queries over one record type's table, kept current together: an announced row is
/// read once per batch, whatever the number of queries (or placed as the replication stream
/// carried it: see ``usableStreamedRows(_:)``), and each query it may concern (see
/// ``QueryRoutes``) is told whether it matches — decided in this process for conditions it can
/// evaluate (``CompiledCondition``), by one statement for all the others. Reads run one at a
/// time, in order: a query's whole runs (its first load, after an outage) go through the same
/// loop, so no read overtakes another.
@usableFromInline
final class RecordQueryRouter<R: Record & Equatable>: @unchecked Sendable where R.ID: Comparable {
    // @unchecked: `routes`, `queries` and `specializedRoute` are Locked values; the rest is immutable.
    @usableFromInline let table: RecordTable<R>
    @usableFromInline let columns: [String: CompiledCondition.Column]
    /// Weak: the repository holds its routers; a loop that outlives it stops.
    @usableFromInline private(set) weak var repository: LiveRepository?
    @usableFromInline let routes = Locked(QueryRoutes<R.ID>())
    /// ``route(_:streamed:)`` compiled for `R` where a public entry point named it (see
    /// ``RoutePass``); nil until one did: the loop then runs the library's unspecialized code.
    /// A leaf lock: taken with or without others held, and nothing is taken under it.
    private let specializedRoute = Locked<RoutePass<R>?>(nil)
    /// The queries, held weakly (a query lives while its handles do), with their conditions and
    /// the first loads waiting for their run.
    private let queries = Locked<[ObjectIdentifier: Entry]>([:])

    private struct Entry {
        weak var query: LiveQueryStore<R>?
        let predicate: QueryPredicate
        var load: CheckedContinuation<Void, any Error>?
    }

    init(table: RecordTable<R>, columns: [String: CompiledCondition.Column], repository: LiveRepository) {
        self.table = table
        self.columns = columns
        self.repository = repository
    }

    /// Registers `query` (reading `predicate`) and waits for its first whole run.
    func load(_ query: LiveQueryStore<R>, _ predicate: QueryPredicate) async throws {
        let id = ObjectIdentifier(query)
        let check: QueryRoutes<R.ID>.Check = predicate.condition.flatMap {
            CompiledCondition.compile($0, parameters: predicate.parameters, columns: columns)
        }.map { .here($0) } ?? (predicate.condition == nil ? .here(.always) : .server)
        // Cancelled, the caller stops waiting for the router's loop, and the query is forgotten.
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                queries.withLock { $0[id] = Entry(query: query, predicate: predicate, load: continuation) }
                if Task.isCancelled { return cancelLoad(id) }
                if routes.withLock({ $0.add(id, check) }) { startLoop() }
            }
        } onCancel: {
            cancelLoad(id)
        }
    }

    /// The first load's waiter of query `id`, taken: whoever takes it resumes it, once.
    private func takeLoad(_ id: ObjectIdentifier) -> CheckedContinuation<Void, any Error>? {
        queries.withLock { queries in
            defer { queries[id]?.load = nil }
            return queries[id]?.load
        }
    }

    /// A load whose task was cancelled: unless it already ended, its waiter throws, and the query is forgotten.
    private func cancelLoad(_ id: ObjectIdentifier) {
        guard let load = takeLoad(id) else { return }
        forget(id)
        load.resume(throwing: CancellationError())
    }

    /// A query that went away: it is no longer routed to, and what it held is forgotten. Its
    /// deinitializer calls this; the router's locks guard plain values and are taken last, so
    /// this is safe from any thread.
    func forget(_ id: ObjectIdentifier) {
        queries.withLock { $0[id] = nil }
        routes.withLock { $0.remove(id) }
    }

    /// Rows of the table changed (in this order): announced, or streamed with their rows.
    func changed(_ changes: [Change]) {
        guard let pass = specializedRoute.withLock({ $0 }) else { return announce(changes) }
        pass.announce(self, changes)
    }

    /// ``changed(_:)``'s work: the keys as ids, queued for the loop.
    @inlinable func announce(_ changes: [Change]) {
        let ids = changes.compactMap { change in table.key.id(from: change.key, as: R.ID.self).map { (id: $0, change: Optional(change)) } }
        if routes.withLock({ $0.announce(ids) }) { startLoop() }
    }

    /// Every query runs whole again.
    func rerun() {
        if routes.withLock({ $0.rerunAll() }) { startLoop() }
    }

    /// How many queries are registered, and how many of them the server checks (for tests and
    /// measurements).
    var count: Int { routes.withLock { $0.checks.count } }
    @usableFromInline var serverCheckedCount: Int { routes.withLock { $0.serverChecked.count } }

    @usableFromInline func startLoop() {
        Task { await loop() }
    }

    /// Routes rows with `pass` from now on (see ``RoutePass``).
    func use(_ pass: RoutePass<R>) {
        specializedRoute.withLock { $0 = $0 ?? pass }
    }

    /// Whether a pass compiled for `R` routes the rows (for tests).
    var routesSpecialized: Bool { specializedRoute.withLock { $0 != nil } }

    private func loop() async {
        while let (fullRuns, keys, streamed) = routes.withLock({ $0.next() }) {
            for id in fullRuns { await runWhole(id) }
            guard !keys.isEmpty else { continue }
            do {
                if let pass = specializedRoute.withLock({ $0 }) {
                    try await pass.route(self, keys, streamed)
                } else {
                    try await route(keys, streamed: streamed)
                }
            } catch {
                repository?.report(.refreshFailed(table: table.shownName, error))
                rereadApart(keys)
            }
        }
    }

    /// The query's own whole run; its first load's waiter, if any, hears how it went.
    private func runWhole(_ id: ObjectIdentifier) async {
        guard let query = liveQuery(id) else { return }
        do {
            try await query.refresh(nil)
            routes.withLock { $0.record(id, checked: nil, matching: Set(query.elements.ids)) }
            takeLoad(id)?.resume()
        } catch {
            if let load = takeLoad(id) {
                forget(id)
                return load.resume(throwing: error)
            }
            routes.withLock { $0.runFailed(id) }
            repository?.report(.refreshFailed(table: table.shownName, error))
        }
    }

    /// The query registered as `id`, or nil (and forgotten) when it is gone.
    @usableFromInline func liveQuery(_ id: ObjectIdentifier) -> LiveQueryStore<R>? {
        if let query = queries.withLock({ $0[id]?.query }) { return query }
        queries.withLock { $0[id] = nil }
        routes.withLock { $0.remove(id) }
        return nil
    }

    /// The predicates of the queries the server checks, in their order.
    func serverChecked() -> [(id: ObjectIdentifier, predicate: QueryPredicate)] {
        let ids = routes.withLock { $0.serverChecked }
        return queries.withLock { queries in ids.compactMap { id in queries[id].map { (id, $0.predicate) } } }
    }

    /// The queries a read row concerns, and whether it is a member of each (see
    /// ``QueryRoutes/verdicts(for:row:server:)``).
    @inlinable func verdicts(for id: R.ID, row: inout ResultRowValues?, server: [ObjectIdentifier: Bool]) -> [(query: ObjectIdentifier, member: Bool?)] {
        routes.withLock { $0.verdicts(for: id, row: &row, server: server) }
    }

    /// ``verdicts(for:row:server:)`` one at a time (see ``QueryRoutes/forEachVerdict(for:row:server:_:)``).
    @inlinable func forEachVerdict(for id: R.ID, row: inout ResultRowValues?, server: [ObjectIdentifier: Bool],
                                   _ body: (ObjectIdentifier, Bool?) -> Void) {
        routes.withLock { $0.forEachVerdict(for: id, row: &row, server: server, body) }
    }

    /// After a query applied a read: who holds what.
    @inlinable func record(_ query: ObjectIdentifier, checked: [R.ID], matching: Set<R.ID>) {
        routes.withLock { $0.record(query, checked: checked, matching: matching) }
    }

    /// A query that must run whole (a row's value could not be read for its condition).
    @usableFromInline func mustRunWhole(_ query: ObjectIdentifier) {
        if routes.withLock({ $0.rerun(query) }) { startLoop() }
    }
}

extension CompiledCondition {
    /// No condition: every row matches.
    static let always = CompiledCondition(root: .value(.constant(.boolean(true))), columns: [], equality: nil)
}

extension RecordQueryRouter: AnyLiveQuery {
    var tableName: String { table.qualifiedName }
    /// While it routes for some query: a router outlives its queries.
    func follows(_ table: String) -> Bool { table == self.table.qualifiedName && count > 0 }
}

/// A router's pass over changed rows (``RecordQueryRouter/route(_:streamed:)``), compiled where
/// the record type is known: the public entry point that makes a live query is `@inlinable`
/// and makes it, so the pass — and the `@inlinable` per-row path below it — runs specialized
/// for the user's type, as ``StoreEngine`` does for live records.
@usableFromInline
struct RoutePass<R: Record & Equatable>: Sendable where R.ID: Comparable {
    /// Queues announced rows (``RecordQueryRouter/announce(_:)``): their keys made ids.
    let announce: @Sendable (RecordQueryRouter<R>, [Change]) -> Void
    /// Routes the rows with these keys (``RecordQueryRouter/route(_:streamed:)``).
    let route: @Sendable (RecordQueryRouter<R>, [R.ID], [R.ID: Change]) async throws -> Void

    /// The pass, made where this is inlined: in the caller's module, for the caller's `R`.
    @inlinable static var specialized: RoutePass {
        RoutePass(announce: { $0.announce($1) }, route: { router, keys, streamed in try await router.route(keys, streamed: streamed) })
    }

    @usableFromInline init(announce: @escaping @Sendable (RecordQueryRouter<R>, [Change]) -> Void,
                           route: @escaping @Sendable (RecordQueryRouter<R>, [R.ID], [R.ID: Change]) async throws -> Void) {
        (self.announce, self.route) = (announce, route)
    }
}
