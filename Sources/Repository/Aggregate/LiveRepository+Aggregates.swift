public import IdentifiedCollections

extension LiveRepository {
    /// A live handle onto the aggregate rooted at `id`: its root row and its children, read
    /// together, written back row by row, and re-read when any of those rows changes —
    /// including children inserted by other processes.
    ///
    /// ```swift
    /// let person = try await repository.read(Person.self, id: 42)
    /// person[\.addresses][0][\.street].value = "1 Main St"   // updates that one address row
    /// person[\.addresses].value.append(Address(street: "2 Side St"))  // inserts it, bumps the person's version
    /// ```
    /// - Throws: ``LiveRecordError/notFound(table:key:)`` when there is no such root row.
    public func read<A: Aggregate>(_ type: A.Type = A.self, id: A.ID) async throws -> Var<A> {
        let table = try await aggregateTable(for: A.self)
        guard let store = try await aggregateStores(table, ids: [id]).first else {
            throw LiveRecordError.notFound(table: table.qualifiedName, key: Self.keyText(id))
        }
        return store.handle()
    }

    /// A live query over aggregates: those whose root row matches `condition`, in `order`.
    /// Like `readAll` for records; elements here
    /// are whole aggregates, live like `read(_:id:)` of an aggregate.
    public func readAll<A: Aggregate>(
        _ type: A.Type = A.self, where condition: String? = nil, parameters: [any SQLValueConvertible] = [],
        orderBy: [SortKey<A>] = []
    ) async throws -> Var<IdentifiedArrayOf<A>> {
        let table = try await aggregateTable(for: A.self)
        let source = QuerySource<A>(
            table: table.qualifiedName,
            matchingIDs: queryIDs(A.ID.self, from: table.root.quoted, QueryPredicate(condition: condition, parameters: parameters.map(\.sqlValue))),
            stores: { [weak self] ids in try await self?.aggregateStores(table, ids: ids) ?? [] })
        return try await openQuery(source, orderBy: orderBy)
    }

    func aggregateTable<A: Aggregate>(for _: A.Type) async throws -> AggregateTable<A> {
        if let known = tables.withLock({ $0[ObjectIdentifier(A.self)] }) as? AggregateTable<A> { return known }
        let resolved = AggregateTable<A>(root: try await table(for: A.Root.self), child: try await table(for: A.Child.self))
        tables.withLock { $0[ObjectIdentifier(A.self)] = resolved }
        childRoutes.withLock { routes in
            guard !routes[resolved.child.qualifiedName, default: []].contains(where: { $0.aggregate == ObjectIdentifier(A.self) }) else { return }
            routes[resolved.child.qualifiedName, default: []].append(ChildRoute(resolved))
        }
        return resolved
    }

    /// The live stores of these aggregates, shared or read now; missing roots left out.
    func aggregateStores<A: Aggregate>(_ table: AggregateTable<A>, ids: [A.ID]) async throws -> [AggregateStore<A>] {
        let keys = ids.map { StoreKey(table: table.qualifiedName, key: Self.keyText($0), isAggregate: true) }
        let live = try await sharedStores(ids: ids, keys: keys, read: table.fetch, id: \.value.id) { snapshot in
            let owner = StoreKey(table: table.qualifiedName, key: Self.keyText(snapshot.value.id), isAggregate: true)
            return AggregateStore(snapshot, table: table, policy: policy, report: report) { [weak self] children in
                self?.registerChildren(children.map { Self.keyText($0) }, of: table.child.qualifiedName, owner: owner)
            }
        }
        // Outside the identity map's lock (registering takes the owners' lock, then maybe that one).
        for store in live {
            registerChildren(store.childVersions.keys.map { Self.keyText($0) }, of: table.child.qualifiedName, owner: store.storeKey)
        }
        return live
    }

    /// Notes which aggregate owns these children, for routing their announcements. Entries of
    /// children since removed stay until pruned: they cost at most a needless re-read.
    func registerChildren(_ children: [String], of childTable: String, owner: StoreKey) {
        childOwners.withLock { owners in
            if owners.count > 100_000 { owners = owners.filter { stores.withLock { [key = $0.value] in $0[key]?.store != nil } } }
            for child in children { owners[StoreKey(table: childTable, key: child)] = owner }
        }
    }

    /// The live aggregates that announcements of child rows make stale: a known child
    /// announced at a newer version or deleted, and the owners of children nobody here knew,
    /// looked up through `query`.
    func staleAggregates(forChildChanges changes: [Change], using query: (String, [SQLValue]) throws -> QueryResult) -> [any AnyLiveStore] {
        let routes = childRoutes.withLock { $0 }
        let relevant = changes.filter { routes[$0.table] != nil }
        guard !relevant.isEmpty else { return [] }
        var stale: [StoreKey: any AnyLiveStore] = [:]
        var unknown: [String: [ChangeKey]] = [:]
        for change in relevant {
            let childKey = StoreKey(table: change.table, key: change.key.description)
            let owner = childOwners.withLock { $0[childKey] }.flatMap { key in stores.withLock { $0[key]?.store } } as? any AnyAggregateStore
            let known = owner?.childVersion(forKey: childKey.key)
            if let owner, let known, change.operation == .delete || change.version > known {
                stale[owner.storeKey] = owner
            }
            if change.operation != .delete, known.map({ change.version > $0 }) ?? true {
                unknown[change.table, default: []].append(change.key)  // new here, or maybe moved to another parent
            }
        }
        for (table, keys) in unknown {
            for route in routes[table] ?? [] {
                do {
                    for parent in try route.parents(keys, query) {
                        let key = StoreKey(table: route.rootTable, key: parent, isAggregate: true)
                        if let store = stores.withLock({ $0[key]?.store }) { stale[key] = store }
                    }
                } catch {
                    report(.refreshFailed(table: table, error))
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
    /// The root keys owning these children.
    let parents: @Sendable ([ChangeKey], (String, [SQLValue]) throws -> QueryResult) throws -> [String]

    init<A: Aggregate>(_ table: AggregateTable<A>) {
        aggregate = ObjectIdentifier(A.self)
        rootTable = table.qualifiedName
        parents = { keys, query in
            let ids = keys.compactMap { $0.decode(as: A.Child.ID.self) }
            return ids.isEmpty ? [] : try table.parents(of: ids, using: query).map { LiveRepository.keyText($0) }
        }
    }
}
