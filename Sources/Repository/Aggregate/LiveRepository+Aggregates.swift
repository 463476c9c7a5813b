public import IdentifiedCollections

extension LiveRepository {
    /// A live handle onto the aggregate rooted at `id`: its root row and its children, read
    /// together, written back row by row, and re-read when any of those rows changes —
    /// including children inserted by other processes.
    ///
    /// ```swift
    /// let person = try await repository.read(Person.self, id: 42)
    /// person[\.addresses][0][\.street].value = "1 Main St"   // updates that one address row
    /// person[\.addresses].value.append(Address(street: "2 Side St"))  // inserts it, writes a new version of the person row
    /// ```
    /// - Throws: ``LiveRecordError/notFound(table:key:)`` when there is no such root row.
    public func read<A: Aggregate>(_ type: A.Type = A.self, id: A.ID) async throws -> Var<A> {
        let table = try await aggregateTable(for: A.self)
        guard let store = try await aggregateStores(table, ids: [id]).first else {
            throw LiveRecordError.notFound(table: table.shownName, key: Self.keyText(id))
        }
        return store.handle()
    }

    /// A live query over aggregates: those whose root row matches `condition`, in `order`.
    /// Like `readAll` for records, and routed with them (a changed root row is read once for
    /// every live query over the root table); elements here are whole aggregates, live like
    /// `read(_:id:)` of an aggregate.
    public func readAll<A: Aggregate>(
        _ type: A.Type = A.self, where condition: String? = nil, parameters: [any SQLValueConvertible] = [],
        orderBy: [SortKey<A>] = []
    ) async throws -> Var<IdentifiedArrayOf<A>> {
        let table = try await aggregateTable(for: A.self)
        // Membership is the root rows': a live query over them, routed with every other query
        // over the root table — so a changed root row is read once for all such queries.
        let roots = try await routedQuery(table.root, try QueryPredicate(condition: condition, parameters: parameters.map(\.sqlValue)))
        let membership = AggregateMembership(roots, table: table.root)
        let source = QuerySource<A>(table: table.qualifiedName, shownTable: table.shownName, key: table.root.key) { [weak self] ids in
            // Contents from the aggregates' own stores, which re-read themselves when any of
            // their rows changes.
            let members = membership.members(among: ids)
            do {
                let stores = try await self?.aggregateStores(table, ids: members) ?? []
                membership.read(ids, members: members, found: stores.map(\.id))
                return (QueryState<A>.Read(checked: ids, matching: stores.map { ($0.value, $0) }), {})
            } catch {
                membership.read(ids, members: members, found: nil)
                throw error
            }
        }
        let query = LiveQueryStore(source: source, order: QueryOrder(keys: orderBy), owner: self, report: report)
        membership.follow { [weak query] ids in ids.map { query?.changed($0) } ?? query?.rerun() }
        // For missing aggregates' announcements, and outages (see ``AggregateMembership``).
        queries.withLock { $0.add(membership) }
        try await query.load()
        return query.handle()
    }

    func aggregateTable<A: Aggregate>(for _: A.Type) async throws -> AggregateTable<A> {
        if let known = tables.withLock({ $0[ObjectIdentifier(A.self)] }) as? AggregateTable<A> { return known }
        let resolved = AggregateTable<A>(root: try await table(for: A.Root.self), child: try await table(for: A.Child.self))
        tables.withLock { $0[ObjectIdentifier(A.self)] = resolved }
        identity.withLock { $0.addRoute(ChildRoute(resolved), childTable: resolved.child.qualifiedName) }
        return resolved
    }

    /// The leases of the live stores of these aggregates, shared or read now; missing roots left out.
    func aggregateStores<A: Aggregate>(_ table: AggregateTable<A>, ids: [A.ID]) async throws -> [StoreLease<AggregateTable<A>>] {
        try await sharedStores(table, ids: ids, committedChanged: { [weak self] owner, committed in
            self?.registerChildren(committed.value.children.map { Self.keyText($0.id) }, of: table.child.qualifiedName, owner: owner)
        })
    }

    /// Notes which aggregate owns these children (see ``IdentityMap/registerChildren(_:of:owner:)``).
    func registerChildren(_ children: [String], of childTable: String, owner: StoreKey) {
        identity.withLock { $0.registerChildren(children, of: childTable, owner: owner) }
    }

    /// The live aggregates that announcements of child rows make stale: a known child
    /// announced at another version or deleted, and the owners of children nobody here knew,
    /// looked up through `query`.
    func staleAggregates(forChildChanges changes: [Change], using query: FeedQuery) -> [any AnyLiveStore] {
        let routes = identity.withLock { $0.childRoutes }
        let relevant = changes.filter { routes[$0.table] != nil }
        guard !relevant.isEmpty else { return [] }
        var stale: [ObjectIdentifier: any AnyLiveStore] = [:]
        // A truncated child table: every aggregate with such children.
        let truncatedRoots = Set(relevant.filter { $0.operation == .truncate }.flatMap { routes[$0.table] ?? [] }.map(\.rootTable))
        if !truncatedRoots.isEmpty {
            for store in identity.withLock({ $0.aggregates(rootedIn: truncatedRoots) }) { stale[ObjectIdentifier(store)] = store }
        }
        var unknown: [String: [ChangeKey]] = [:]
        for change in relevant where change.operation != .truncate {
            let childKey = StoreKey(table: change.table, key: change.key.description)
            let owners = identity.withLock { $0.owners(ofChild: childKey) } ?? []
            var isStale: Bool?
            for owner in owners {
                guard let verdict = owner.isStale(afterChildChange: change) else { continue }
                if verdict { stale[ObjectIdentifier(owner)] = owner }
                isStale = (isStale ?? false) || verdict
            }
            if change.operation != .delete, isStale ?? true {
                unknown[change.table, default: []].append(change.key)  // new here, or maybe moved to another parent
            }
        }
        for (table, keys) in unknown {
            for route in routes[table] ?? [] {
                do {
                    for parent in try route.parents(keys, query) {
                        let key = StoreKey(table: route.rootTable, key: parent, isAggregate: true)
                        for store in identity.withLock({ $0[key]?.all ?? [] }) { stale[ObjectIdentifier(store)] = store }
                    }
                } catch {
                    report(.refreshFailed(table: route.shownChildTable, error))
                }
            }
        }
        return Array(stale.values)
    }
}

/// How announcements of one child table reach the aggregates that hold such children.
struct ChildRoute: Sendable {
    let aggregate: ObjectIdentifier
    let rootTable: String
    /// The child table as messages name it (``RecordTable/shownName``).
    let shownChildTable: String
    /// The root keys owning these children.
    let parents: @Sendable ([ChangeKey], FeedQuery) throws -> [String]

    init(aggregate: ObjectIdentifier, rootTable: String, shownChildTable: String, parents: @escaping @Sendable ([ChangeKey], FeedQuery) throws -> [String]) {
        (self.aggregate, self.rootTable, self.shownChildTable, self.parents) = (aggregate, rootTable, shownChildTable, parents)
    }

    init<A: Aggregate>(_ table: AggregateTable<A>) {
        aggregate = ObjectIdentifier(A.self)
        rootTable = table.qualifiedName
        shownChildTable = table.child.shownName
        parents = { keys, query in
            let ids = keys.compactMap { table.child.key.id(from: $0, as: A.Child.ID.self) }
            return ids.isEmpty ? [] : try table.parents(of: ids, using: query).map { LiveRepository.keyText($0) }
        }
    }
}
