import Foundation

/// Live handles onto rows: `read(id:)` returns a ``Var`` that writes through to its row and
/// follows changes made by any process.
///
/// ```swift
/// let repository = LiveRepository(database)
/// let person: Var<Person> = try await repository.read(id: 42)
/// person[\.name].value = "Ada"     // observers run now; the UPDATE follows
/// try await person.save()           // waits until it is durable, throws what failed
/// ```
///
/// - One live store per (table, key): reading the same row twice gives handles that share
///   their value, their writes and their refetches.
/// - Writes send only the changed columns, `WHERE id = $1 AND version = $2`. When another
///   writer got there first, edits of different columns are merged; edits of the same column
///   follow the ``ConflictPolicy`` and are reported.
/// - A ``ChangeFeed`` announces every committed change; the repository re-reads the changed
///   rows in batches and applies only newer versions. After the feed reconnects, every live
///   row is re-read, so nothing committed during an outage is missed.
/// - Failures are never silent: the handle returns to the database's state, `save()` throws,
///   and ``errors`` reports it for writes nobody awaited.
public final class LiveRepository: Sendable {
    /// The pool reads and writes go through.
    public let database: Database
    /// Problems nobody awaited — failed writes, conflicts, writes to deleted rows — and the
    /// change feed's outages and recoveries.
    public let errors: AsyncStream<LiveRecordError>

    let policy: ConflictPolicy
    let feed: ChangeFeed
    let report: @Sendable (LiveRecordError) -> Void
    let stores = Locked<[StoreKey: WeakStore]>([:])
    /// When the identity map next drops the entries of stores nobody holds any more.
    let pruneAt = Locked(1024)
    /// The newest version announced per row, so a row read while its change was in flight
    /// is re-read rather than left stale.
    let announced = Locked<[StoreKey: Int64]>([:])
    let listener = Locked<Task<Void, Never>?>(nil)
    let reads = Locked(ReadCount())
    let pendingRefresh = Locked<(stores: [ObjectIdentifier: any AnyLiveStore], isRunning: Bool)>(([:], false))
    /// Open once the feed has listened: a row must be read *after* LISTEN, or a change
    /// committed in between would never be announced to it.
    let listening = Locked<(isOpen: Bool, waiters: [UUID: CheckedContinuation<Void, Never>])>((false, [:]))
    /// The live queries, for routing change announcements to them.
    let queries = Locked<[WeakQuery]>([])
    /// Which aggregate owns each child row held live, for routing the child's announcements.
    let childOwners = Locked<[StoreKey: StoreKey]>([:])
    /// Per child table, how to find the aggregates its rows belong to.
    let childRoutes = Locked<[String: [ChildRoute]]>([:])
    /// Each record type's table, resolved once.
    let tables = Locked<[ObjectIdentifier: any Sendable]>([:])

    /// Entries in the identity map, live or awaiting pruning (for tests).
    var identityMapCount: Int { stores.withLock { $0.count } }

    /// How many queries reading rows this repository has run (reads, re-reads, live query
    /// membership checks), for monitoring and benchmarks.
    public var rowQueries: Int { reads.withLock { $0.queries } }

    /// How many rows those queries returned: what following changes costs.
    public var rowsRead: Int { reads.withLock { $0.rows } }

    /// An entry of the identity map: a row, or an aggregate rooted at that row.
    struct StoreKey: Hashable {
        let table: String
        let key: String
        var isAggregate = false
    }

    /// A repository over `database`, listening for changes on the channel the installed
    /// triggers use.
    public init(_ database: Database, conflictPolicy: ConflictPolicy = .databaseWins,
                channel: String = ChangeFeed.defaultChannel) {
        self.database = database
        self.policy = conflictPolicy
        let (errors, continuation) = AsyncStream<LiveRecordError>.makeStream()
        self.errors = errors
        self.report = { continuation.yield($0) }
        feed = ChangeFeed(database.configuration, channel: channel)
        let events = feed.events
        defer { feed.reader.set(self) }  // announced rows are re-read on the feed's thread
        listener.withLock {
            $0 = Task { [weak self] in
                for await event in events {
                    guard let self else { return }
                    await self.handle(event)
                }
            }
        }
    }

    deinit { close() }

    /// Stops following changes. Handles keep their values; writes still go through.
    public func close() {
        feed.stop()
        listener.withLock { $0?.cancel() }
    }

    /// A live handle onto the row of `R` whose id is `id`.
    /// - Throws: ``LiveRecordError/notFound(table:key:)`` when there is no such row, or the
    ///   ``PostgresError``/``ColumnDecodingError`` of reading it.
    public func read<R: Record>(_ type: R.Type = R.self, id: R.ID) async throws -> Var<R> {
        let table = try await table(for: R.self)
        guard let store = try await stores(table, ids: [id]).first else {
            throw LiveRecordError.notFound(table: table.qualifiedName, key: Self.keyText(id))
        }
        return store.handle()
    }

    /// The live stores of these rows: shared ones from the identity map, the others read in
    /// batches. Rows that do not exist are left out.
    func stores<R: Record>(_ table: RecordTable<R>, ids: [R.ID]) async throws -> [LiveStore<R>] {
        try await sharedStores(ids: ids, keys: ids.map { StoreKey(table: table.qualifiedName, key: Self.keyText($0)) },
                               read: table.fetch, id: \.record.id) { row in
            LiveStore(id: row.record.id, record: row.record, version: row.version, table: table, policy: policy, report: report)
        }
    }

    /// The stores under `keys` (one per id): from the identity map when live there, otherwise
    /// made from what `read` returns for the missing ids, all in one batch, and registered.
    func sharedStores<ID: Hashable, Row, Store: AnyLiveStore>(
        ids: [ID], keys: [StoreKey], read: ([ID]) async throws -> [Row], id: (Row) -> ID, make: (Row) -> Store
    ) async throws -> [Store] {
        await waitUntilListening()
        var found = stores.withLock { stores in keys.map { Self.live(stores[$0]?.store as? Store) } }
        let missing = ids.indices.filter { found[$0] == nil }
        if !missing.isEmpty {
            let rows = try await read(missing.map { ids[$0] })
            let byID = Dictionary(rows.map { (id($0), $0) }, uniquingKeysWith: { first, _ in first })
            for index in missing {
                guard let row = byID[ids[index]] else { continue }
                found[index] = register(keys[index]) { make(row) }
            }
        }
        let live = found.compactMap { $0 }
        try await refreshAnnounced(live)
        return live
    }

    /// The store registered under `key`, or the one `make` creates, registered now.
    func register<Store: AnyLiveStore>(_ key: StoreKey, _ make: () -> Store) -> Store {
        stores.withLock { stores in
            if let raced = Self.live(stores[key]?.store as? Store) { return raced }
            let fresh = make()
            stores[key] = WeakStore(store: fresh)
            pruneAt.withLock { threshold in
                // Amortized: the map never holds more than about twice the live stores.
                guard stores.count > threshold else { return }
                stores = stores.filter { $0.value.store != nil }
                threshold = max(1024, stores.count * 2)
            }
            return fresh
        }
    }

    /// The store unless its row was deleted.
    static func live<Store: AnyLiveStore>(_ store: Store?) -> Store? {
        store?.state == .deleted ? nil : store
    }

    /// Re-reads the stores whose rows were announced at a newer version while being read.
    func refreshAnnounced(_ live: [any AnyLiveStore]) async throws {
        let stale = announced.withLock { announced in
            live.filter { store in announced[store.storeKey].map { $0 > store.knownVersion } ?? false }
        }
        if let first = stale.first { try await first.refresh(stale) }
    }

    func table<R: Record>(for _: R.Type) async throws -> RecordTable<R> {
        if let known = tables.withLock({ $0[ObjectIdentifier(R.self)] }) as? RecordTable<R> { return known }
        let resolved = try await RecordTable<R>.resolve(database, reads: reads)
        tables.withLock { $0[ObjectIdentifier(R.self)] = resolved }
        return resolved
    }

    static func keyText(_ id: some SQLValueConvertible) -> String {
        if case .text(let text) = id.sqlValue { return text }
        return "\(id)"
    }
}
