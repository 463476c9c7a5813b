public import IdentifiedCollections
import Foundation

extension LiveRepository {
    /// A live query: the rows of `R` that match `condition`, in `order`, kept equal to
    /// re-running the query as any process inserts, updates and deletes rows.
    ///
    /// ```swift
    /// let londoners = try await repository.readAll(Contact.self, where: "city = $1",
    ///                                              parameters: ["London"], orderBy: [.ascending(\.name)])
    /// londoners.observe { update in print(update.changes()) }   // inserted, removed, updated ids
    /// londoners[id: 7][\.name].value = "Ada"                     // writes through to row 7
    /// ```
    ///
    /// - Parameters:
    ///   - type: the record type.
    ///   - condition: A boolean SQL expression over the table's columns, or nil for every row.
    ///     It is **trusted SQL**, spliced into the query: write it in your code, never build it
    ///     from input — values go in `parameters`, as `$1`, `$2`…. It must be one expression (a
    ///     `)` closing more than it opened, or a `;`, is refused with
    ///     ``PostgresError/Kind/invalidStatement``) and depend on the row alone — no subquery over
    ///     other rows — because changed rows are checked one by one.
    ///   - parameters: the values of `$1`, `$2`… in `condition`.
    ///   - orderBy: Sort keys, compared in Swift; ties are ordered by id.
    /// - Throws: ``PostgresError`` for a condition that is not one expression, or the server's error.
    /// - Returns: A `Var` whose elements are live handles: `result[id: x]` writes through like
    ///   `read(_:id:)`. Elements join and leave only through the database; adding, removing
    ///   or moving one in the result is undone and reported (``LiveRecordError/membershipIsReadOnly(table:)``).
    @inlinable
    public func readAll<R: Record & Equatable>(
        _ type: R.Type = R.self, where condition: String? = nil, parameters: [any SQLValueConvertible] = [],
        orderBy: [SortKey<R>] = []
    ) async throws -> Var<IdentifiedArrayOf<R>> where R.ID: Comparable {
        useEngine(.specialized(for: R.self))
        return try await readAllRecords(type, where: condition, parameters: parameters, orderBy: orderBy, pass: .specialized)
    }

    /// ``readAll(_:where:parameters:orderBy:)``, once the engine of `R`'s stores is registered,
    /// its router's `pass` compiled for `R`.
    @usableFromInline
    func readAllRecords<R: Record & Equatable>(
        _ type: R.Type, where condition: String?, parameters: [any SQLValueConvertible], orderBy: [SortKey<R>],
        pass: RoutePass<R>
    ) async throws -> Var<IdentifiedArrayOf<R>> where R.ID: Comparable {
        let table = try await table(for: R.self)
        let predicate = try QueryPredicate(condition: condition, parameters: parameters.map(\.sqlValue))
        return try await routedQuery(table, predicate, orderBy: orderBy, pass: pass).handle()
    }

    /// A live query over `table`'s rows matching `predicate`, loaded, and followed through the
    /// table's router.
    func routedQuery<R: Record & Equatable>(_ table: RecordTable<R>, _ predicate: QueryPredicate,
                                            orderBy: [SortKey<R>] = [], pass: RoutePass<R>? = nil) async throws -> LiveQueryStore<R> where R.ID: Comparable {
        let router = try await queryRouter(for: table)
        if let pass { router.use(pass) }
        try await waitUntilListening()
        let query = LiveQueryStore(source: recordQuerySource(table, predicate), order: QueryOrder(keys: orderBy),
                                   router: router, onRelease: { [weak router] in router?.forget($0) }, owner: self, report: report)
        try await router.load(query, predicate)
        return query
    }

    /// The router of `R`'s live queries, made (and registered for announcements) on first use.
    func queryRouter<R: Record & Equatable>(for table: RecordTable<R>) async throws -> RecordQueryRouter<R> where R.ID: Comparable {
        if let router = queries.withLock({ $0.router(for: ObjectIdentifier(R.self)) }) as? RecordQueryRouter<R> { return router }
        let rows = try await database.query("""
            SELECT a.attname, a.atttypid::int8, coalesce(co.collname IN ('C', 'POSIX')
                OR (a.attcollation = 100 AND (SELECT datcollate IN ('C', 'POSIX') FROM pg_database WHERE datname = current_database())), false),
                coalesce(co.collisdeterministic, true)
            FROM pg_attribute a LEFT JOIN pg_collation co ON co.oid = a.attcollation
            WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped
            """, [table.quoted])
        var columns: [String: CompiledCondition.Column] = [:]
        for row in rows {
            let type = PostgresType(rawValue: UInt32(truncatingIfNeeded: try row.decode(Int64.self, at: 1)))
            // A nondeterministic collation (case-insensitive, say) makes even `=` differ from
            // comparing bytes: such a column is left to the server.
            let kind = try row.decode(Bool.self, at: 3) ? ConditionValue.Kind(type) : nil
            columns[try row.decode(String.self, at: 0)] = .init(kind: kind, bytewiseOrder: try row.decode(Bool.self, at: 2))
        }
        let fresh = RecordQueryRouter(table: table, columns: columns, repository: self)
        let router = queries.withLock {
            $0.keep(router: fresh, for: ObjectIdentifier(R.self), routesRowsTo: ObjectIdentifier(LiveStore<RecordTable<R>>.self))
        }
        guard let router = router as? RecordQueryRouter<R> else { throw CancellationError() }
        return router
    }

    /// Counts a statement that read `rows` rows again (see ``ReadCount``, ``LiveMetrics/rowsReread``).
    @usableFromInline func countRead(rows: Int) {
        reads.withLock { $0.queries += 1; $0.rows += rows }
        metrics.rowsReread.increment(by: rows)
    }

    /// How a query over records reads: the rows themselves, with whether each matches, in one
    /// statement per 1,000 ids — so the list, the stores and membership all come from one read.
    func recordQuerySource<R: Record & Equatable>(_ table: RecordTable<R>, _ predicate: QueryPredicate) -> QuerySource<R> where R.ID: Comparable {
        QuerySource(table: table.qualifiedName, shownTable: table.shownName, key: table.key) { [weak self] ids in
            guard let self else { throw CancellationError() }
            let number = await sequence.nextRead()
            var rows: [R.ID: Committed<RecordContent<R>>] = [:]
            var matchingIDs: [R.ID] = [], notMatchingIDs: [R.ID] = []
            for (sql, values) in try predicate.selectRows(from: table.quoted, key: table.key, among: ids) {
                let result = try await database.query(sql, values)
                countRead(rows: result.count)
                guard !result.isEmpty else { continue }
                let matches = try result.columnIndex(QueryPredicate.matchesColumn, decoding: Bool.self)
                for ((record, version), row) in zip(try RecordTable<R>.decode(result), result) {
                    try DistinctKeys.add(Committed(value: record, version: version), to: &rows, table: table.shownName)
                    if try row.decode(Bool.self, at: matches) { matchingIDs.append(record.id) } else { notMatchingIDs.append(record.id) }
                }
            }
            // An id type that cannot name the key (a struct of its columns in another order) is
            // refused as `read(id:)` refuses it, rather than failing each later re-read.
            if let id = matchingIDs.first ?? notMatchingIDs.first { _ = try table.key.values(of: id) }
            let stores = try await sharedStores(table, ids: matchingIDs, readAs: number) { ids in
                ids.compactMap { id in rows[id].map { (id, $0) } }
            }
            var matching: [(element: R, store: any MemberStore<R>)] = []
            var matchingReads: [(store: LiveStore<RecordTable<R>>, row: Committed<RecordContent<R>>)] = []
            matching.reserveCapacity(stores.count)
            matchingReads.reserveCapacity(stores.count)
            for lease in stores {
                guard let row = rows[lease.id] else { continue }
                matching.append((row.value, lease))  // shown as the store holds it once applied
                matchingReads.append((lease.store, row))
            }
            // Checked rows that do not match (any more), or are gone: their stores, if any are
            // held elsewhere, are found at the hand-over. (The rows read are among `ids`, which
            // are distinct: fewer rows than ids means some are gone.)
            let gone = ids.map { ids in rows.count < ids.count ? ids.filter { rows[$0] == nil } : [] } ?? []
            let others = (notMatchingIDs + gone).map { (id: $0, row: rows[$0], key: StoreKey(table: table.qualifiedName, key: Self.keyText($0))) }
            return (QueryState<R>.Read(checked: ids, matching: matching, number: number), { [weak self, matchingReads] in
                // Every row read goes to its live store, if one is held; a checked row that is
                // gone is deleted.
                for (store, row) in matchingReads { store.applyRead(row, sequence: number) }
                guard !others.isEmpty, let self else { return }
                let held = self.identity.withLock { map in others.map { map[$0.key]?.store(as: LiveStore<RecordTable<R>>.self) } }
                for (other, store) in zip(others, held) { store?.applyRead(other.row, sequence: number) }
            })
        }
    }

    /// Hands announced changes to the live queries over their tables; returns the tables whose
    /// rows the queries route themselves (read, or as the stream carried them), with the type
    /// of the stores they give them to.
    func notifyQueries(of changes: [Change]) -> Set<RoutedStores> {
        let live = queries.withLock { $0.live() }
        var routed: Set<RoutedStores> = []
        for (query, storeType) in live {
            let mine = changes.filter { query.follows($0.table) }
            guard !mine.isEmpty else { continue }
            if mine.contains(where: { $0.operation == .truncate }) {
                query.rerun()  // the stores of a truncated table read themselves
            } else {
                query.changed(mine)
            }
            if let storeType { routed.insert(RoutedStores(table: query.tableName, storeType: storeType)) }
        }
        return routed
    }
}

/// What the repository needs of a live query without knowing its element type.
protocol AnyLiveQuery: AnyObject, Sendable {
    /// The table (or tables) it follows, for messages.
    var tableName: String { get }
    /// Whether announcements of `table` concern it.
    func follows(_ table: String) -> Bool
    /// Rows of a table it follows changed.
    func changed(_ changes: [Change])
    /// Anything may have changed: run the whole query again.
    func rerun()
    /// After an outage: run whole again, and take these stores' rows (those of the type it
    /// routes rows to: see ``RecordQueryRouter/resync(_:)``).
    func resync(_ stores: [any AnyLiveStore])
}

extension AnyLiveQuery {
    /// A query that shows what it reads itself runs whole again (it routes no rows to stores).
    func resync(_ stores: [any AnyLiveStore]) { rerun() }
}

extension LiveQueryStore: AnyLiveQuery where Element.ID: Decodable {
    var tableName: String { source.table }
    func follows(_ table: String) -> Bool { table == source.table }

    func changed(_ changes: [Change]) {
        changed(changes.compactMap { source.key.id(from: $0.key, as: Element.ID.self) })
    }
}

/// The live stores of one type over one table, to which live queries give the changed rows.
struct RoutedStores: Hashable {
    let table: String
    let storeType: ObjectIdentifier

    /// Whether `store` is one of them.
    func contains(_ store: any AnyLiveStore) -> Bool {
        store.tableName == table && ObjectIdentifier(type(of: store)) == storeType
    }
}
