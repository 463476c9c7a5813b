/// The identity map's routing state, as one value: each table's live stores by key (its rows',
/// and the aggregates' rooted at them), which rows were announced when (``Announcements``),
/// and which aggregate holds which child row. ``LiveRepository`` keeps it behind one lock; its
/// methods are the transitions. None takes another lock — but a store just made, before anyone
/// else can reach it —, so the map's lock is a leaf: a live store's state is asked only once it
/// is released.
///
/// Keys are kept per table, so that a batch of one table's changes hashes the table's name once
/// per run of its keys, not once per key; an announcement and its stores are found under the
/// same lock.
@usableFromInline
struct IdentityMap: Sendable {
    @usableFromInline typealias StoreKey = LiveRepository.StoreKey

    /// One table's entries: its rows' stores, and the aggregates rooted at its rows.
    private struct TableEntries: Sendable {
        var rows: [String: IdentityEntry] = [:]
        var aggregates: [String: IdentityEntry] = [:]

        var count: Int { rows.count + aggregates.count }

        func forEachStore(_ body: (any AnyLiveStore) -> Void) {
            for entry in rows.values { entry.forEachStore(body) }
            for entry in aggregates.values { entry.forEachStore(body) }
        }

        /// Drops the entries no store is held in any more.
        mutating func dropEmpty() {
            rows = rows.filter { !$0.value.isEmpty }
            aggregates = aggregates.filter { !$0.value.isEmpty }
        }
    }

    private var tables: [String: TableEntries] = [:]
    /// Entries held, live or awaiting pruning.
    private(set) var count = 0
    /// When the entries of stores nobody holds any more are next dropped.
    private var pruneAt = 1024
    /// Which rows and tables were announced, and when (by read sequence): a store read while
    /// its row's change was being announced is re-read rather than left stale.
    private(set) var announcements = Announcements()
    /// Which aggregate holds each child row held live, for routing the child's announcements.
    private var childOwners: [StoreKey: StoreKey] = [:]
    /// Per child table, how to find the aggregates its rows belong to.
    private(set) var childRoutes: [String: [ChildRoute]] = [:]

    @usableFromInline init() {}

    /// The entry under `key`.
    @usableFromInline subscript(key: StoreKey) -> IdentityEntry? {
        guard let entries = tables[key.table] else { return nil }
        return key.isAggregate ? entries.aggregates[key.key] : entries.rows[key.key]
    }

    /// The leases of stores of type `LiveStore<Table>` under these keys of `table` (rows', or
    /// aggregates'), in order: the table is looked up once.
    @usableFromInline func leases<Table>(as _: StoreLease<Table>.Type, in table: String, aggregates: Bool, keys: [String]) -> [StoreLease<Table>?] {
        guard let entries = tables[table] else { return keys.map { _ in nil } }
        let byKey = aggregates ? entries.aggregates : entries.rows
        return keys.map { byKey[$0]?.lease(as: StoreLease<Table>.self) }
    }

    /// The lease of the store registered under `key`, or of the one `make` creates, registered
    /// now (its lease keeping `owner`); `make` runs under the map's lock, and must take no lock but the new store's.
    @usableFromInline mutating func register<Table>(_ key: StoreKey, owner: (any AnyObject & Sendable)? = nil,
                                                    _ make: () -> LiveStore<Table>) -> (lease: StoreLease<Table>, isNew: Bool) {
        if let raced = self[key]?.lease(as: StoreLease<Table>.self) { return (raced, false) }
        let fresh = StoreLease(make(), owner: owner)
        add(fresh, under: key)
        return (fresh, true)
    }

    /// Adds `lease` under `key` (holding none of its type), and prunes once past the threshold:
    /// the map never holds more than about twice the live entries.
    mutating func add(_ lease: any AnyStoreLease, under key: StoreKey) {
        if self[key] == nil { count += 1 }
        // In place: each step modifies the dictionary it reaches, copying none.
        if key.isAggregate {
            tables[key.table, default: TableEntries()].aggregates[key.key, default: IdentityEntry()].add(lease)
        } else {
            tables[key.table, default: TableEntries()].rows[key.key, default: IdentityEntry()].add(lease)
        }
        guard count > pruneAt else { return }
        dropEmptyEntries()
        pruneAt = max(1024, count * 2)
    }

    /// Drops the entries no store is held in any more.
    private mutating func dropEmptyEntries() {
        count = 0
        for table in tables.keys {
            tables[table]?.dropEmpty()
            count += tables[table]?.count ?? 0
        }
    }

    /// Every live store.
    func allStores() -> [any AnyLiveStore] {
        var live: [any AnyLiveStore] = []
        forEachStore { live.append($0) }
        return live
    }

    /// Every live store, dropping the entries none is left in. One pass over the entries when
    /// none is empty (as after a reconnection, when every store is re-read); a second, which
    /// makes each table's dictionaries anew, only when some are.
    mutating func liveStores() -> [any AnyLiveStore] {
        var live: [any AnyLiveStore] = []
        live.reserveCapacity(count)
        var emptyFound = false
        for entries in tables.values {
            for entry in entries.rows.values { emptyFound = !entry.forEachStore { live.append($0) } || emptyFound }
            for entry in entries.aggregates.values { emptyFound = !entry.forEachStore { live.append($0) } || emptyFound }
        }
        if emptyFound { dropEmptyEntries() }
        return live
    }

    private func forEachStore(_ body: (any AnyLiveStore) -> Void) {
        for entries in tables.values { entries.forEachStore(body) }
    }

    /// Every live aggregate rooted in one of `tables`.
    func aggregates(rootedIn roots: Set<String>) -> [any AnyLiveStore] {
        var found: [any AnyLiveStore] = []
        for root in roots {
            guard let entries = tables[root] else { continue }
            for entry in entries.aggregates.values { entry.forEachStore { found.append($0) } }
        }
        return found
    }

    /// The stores these changes may concern, each with the index of its change, and every store
    /// of a truncated table; the changes' keys are recorded as announced before read `number`.
    /// A row's own store and the aggregate rooted at it (when aggregates use its table); not the
    /// row stores of the types `skipping` names for their table (live queries give them their rows).
    mutating func candidates(for changes: [Change], keys: [StoreKey], announcedAs number: UInt64,
                             skipping: Set<RoutedStores> = []) -> StoreCandidates {
        announcements.record(keys, as: number)
        var found = StoreCandidates()
        found.stores.reserveCapacity(changes.count)
        let truncated = Set(changes.lazy.filter { $0.operation == .truncate }.map(\.table))
        for table in truncated {
            // Every row of a truncated table (and every aggregate rooted there) is gone.
            tables[table]?.forEachStore { found.truncated.append(($0, table)) }
        }
        let aggregateRoots = childRoutes.isEmpty ? [] : Set(childRoutes.values.flatMap { $0.map(\.rootTable) })
        // A batch's keys come a table at a time: its entries are looked up once per run.
        var current: (table: String, entries: TableEntries, skipped: ObjectIdentifier?)?
        for index in changes.indices where changes[index].operation != .truncate {
            let key = keys[index]
            if current?.table != key.table {
                current = tables[key.table].map { (key.table, $0, skipping.first { $0.table == key.table }?.storeType) }
            }
            guard let (_, entries, skipped) = current else { continue }
            entries.rows[key.key]?.forEachStore { store in
                if let skipped, ObjectIdentifier(type(of: store)) == skipped { return }
                found.stores.append((store, index))
            }
            guard !aggregateRoots.isEmpty, aggregateRoots.contains(key.table) else { continue }
            entries.aggregates[key.key]?.forEachStore { found.stores.append(($0, index)) }
        }
        found.truncatedTables = truncated
        return found
    }

    /// Which of `stores` (read as number `number`) had their rows announced since: their
    /// announcement found no store to re-read. An aggregate also follows its child tables.
    func announcedSince(_ number: UInt64, among stores: [any AnyLiveStore]) -> [any AnyLiveStore] {
        stores.filter { store in
            if announcements.mayHaveChanged(store.storeKey, since: number) { return true }
            return store.storeKey.isAggregate && childRoutes.contains { table, routes in
                routes.contains { $0.rootTable == store.tableName } && announcements.mayHaveChanged(table: table, since: number)
            }
        }
    }

    // MARK: - Aggregates' children

    /// Adds `route` for the children in `childTable`, unless its aggregate has one already.
    mutating func addRoute(_ route: ChildRoute, childTable: String) {
        guard !childRoutes[childTable, default: []].contains(where: { $0.aggregate == route.aggregate }) else { return }
        childRoutes[childTable, default: []].append(route)
    }

    /// Notes that the aggregate under `owner` holds these children. Entries of children since
    /// removed stay until pruned: they cost at most a needless re-read.
    mutating func registerChildren(_ children: [String], of childTable: String, owner: StoreKey) {
        if childOwners.count > 100_000 { childOwners = childOwners.filter { !(self[$0.value]?.isEmpty ?? true) } }
        for child in children { childOwners[StoreKey(table: childTable, key: child)] = owner }
    }

    /// The live stores of the aggregate that holds the child row under `key`; nil when no
    /// aggregate here is known to.
    func owners(ofChild key: StoreKey) -> [any AnyLiveStore]? {
        childOwners[key].map { self[$0]?.all ?? [] }
    }
}

/// What ``IdentityMap/candidates(for:keys:announcedAs:)`` found.
struct StoreCandidates {
    /// Each store a change may concern, with the index of its change (not copied per store).
    var stores: [(store: any AnyLiveStore, change: Int)] = []
    /// Each store of a truncated table, with the table.
    var truncated: [(store: any AnyLiveStore, table: String)] = []
    /// The tables truncated in the batch.
    var truncatedTables: Set<String> = []
}
