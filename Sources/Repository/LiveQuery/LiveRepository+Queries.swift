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
    ///   - condition: A boolean SQL expression over the table's columns (`$1`… for
    ///     `parameters`), or nil for every row. It must depend on the row alone — no subquery
    ///     over other rows — because changed rows are checked one by one.
    ///   - orderBy: Sort keys, compared in Swift; ties are ordered by id.
    /// - Returns: A `Var` whose elements are live handles: `result[id: x]` writes through like
    ///   ``read(_:id:)``. Elements join and leave only through the database; adding, removing
    ///   or moving one in the result is undone and reported (``LiveRecordError/membershipIsReadOnly(table:)``).
    public func readAll<R: Record & Equatable>(
        _ type: R.Type = R.self, where condition: String? = nil, parameters: [any SQLValueConvertible] = [],
        orderBy: [SortKey<R>] = []
    ) async throws -> Var<IdentifiedArrayOf<R>> where R.ID: Comparable {
        let table = try await table(for: R.self)
        let source = QuerySource<R>(
            table: table.qualifiedName,
            matchingIDs: queryIDs(R.ID.self, from: table.quoted, QueryPredicate(condition: condition, parameters: parameters.map(\.sqlValue))),
            stores: { [weak self] ids in try await self?.stores(table, ids: ids) ?? [] })
        return try await openQuery(source, orderBy: orderBy)
    }

    /// Runs the query's first load and registers it for change announcements.
    func openQuery<Element: Identifiable & Equatable & Sendable>(
        _ source: QuerySource<Element>, orderBy: [SortKey<Element>]
    ) async throws -> Var<IdentifiedArray<Element.ID, Element>> where Element.ID: Comparable & Sendable & Decodable {
        await waitUntilListening()
        let query = LiveQueryStore(source: source, order: QueryOrder(keys: orderBy), report: report)
        queries.withLock { queries in
            queries = queries.filter { $0.query != nil }
            queries.append(WeakQuery(query: query))
        }
        try await query.load()
        return Var(store: query.value, persistence: query)
    }

    /// Selects the ids of matching rows, counting them as rows read.
    func queryIDs<ID: Decodable & SQLValueConvertible>(_: ID.Type, from quotedTable: String, _ predicate: QueryPredicate) -> @Sendable ([ID]?) async throws -> [ID] {
        { [database, reads] ids in
            let (sql, values) = predicate.selectIDs(from: quotedTable, among: ids)
            let rows = try await database.query(sql, values)
            reads.withLock { $0.queries += 1; $0.rows += rows.count }
            return try rows.map { try $0.decode(ID.self, at: 0) }
        }
    }

    /// Hands announced changes to the live queries over their tables.
    func notifyQueries(of changes: [Change]) {
        let live = queries.withLock { $0.compactMap(\.query) }
        for query in live {
            let keys = changes.filter { $0.table == query.table }.map(\.key)
            if !keys.isEmpty { query.changed(keys) }
        }
    }

    /// After an outage: every live query is re-run.
    func rerunQueries() {
        for query in queries.withLock({ $0.compactMap(\.query) }) { query.rerun() }
    }
}

/// What the repository needs of a live query without knowing its element type.
protocol AnyLiveQuery: AnyObject, Sendable {
    var table: String { get }
    func changed(_ keys: [ChangeKey])
    func rerun()
}

extension LiveQueryStore: AnyLiveQuery where Element.ID: Decodable {
    var table: String { source.table }

    func changed(_ keys: [ChangeKey]) {
        changed(keys.compactMap { $0.decode(as: Element.ID.self) })
    }
}

/// A weak reference: a query lives as long as some handle onto its result.
struct WeakQuery: Sendable {
    weak var query: (any AnyLiveQuery)?
}

extension ChangeKey {
    /// The key as a record's id type, or nil if it cannot be one (a forged announcement).
    func decode<ID: Decodable>(as _: ID.Type) -> ID? {
        // The usual key types directly: this runs once per announced row.
        switch self {
        case .integer(let value):
            if let id = value as? ID ?? Int(exactly: value) as? ID { return id }
        case .text(let value):
            if let id = value as? ID ?? UUID(uuidString: value) as? ID { return id }
        }
        let json: String
        switch self {
        case .integer(let value): json = String(value)
        case .text(let value):
            guard let quoted = try? JSONEncoder().encode(value) else { return nil }
            json = String(decoding: quoted, as: UTF8.self)
        }
        return try? JSONDecoder().decode(ID.self, from: Data(json.utf8))
    }
}
