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

    private let policy: ConflictPolicy
    private let feed: ChangeFeed
    private let report: @Sendable (LiveRecordError) -> Void
    private let stores = Locked<[StoreKey: WeakStore]>([:])
    /// When the identity map next drops the entries of stores nobody holds any more.
    private let pruneAt = Locked(1024)
    /// The newest version announced per row, so a row read while its change was in flight
    /// is re-read rather than left stale.
    private let announced = Locked<[StoreKey: Int64]>([:])
    private let listener = Locked<Task<Void, Never>?>(nil)
    private let fetches = Locked(0)
    private let pendingRefresh = Locked<(stores: [ObjectIdentifier: any AnyLiveStore], isRunning: Bool)>(([:], false))
    /// Open once the feed has listened: a row must be read *after* LISTEN, or a change
    /// committed in between would never be announced to it.
    private let listening = Locked<(isOpen: Bool, waiters: [UUID: CheckedContinuation<Void, Never>])>((false, [:]))
    /// Each record type's table, resolved once.
    private let tables = Locked<[ObjectIdentifier: any Sendable]>([:])

    /// Entries in the identity map, live or awaiting pruning (for tests).
    var identityMapCount: Int { stores.withLock { $0.count } }

    /// How many `SELECT … WHERE id = ANY($1)` queries this repository has run (reads and
    /// refetches; up to 1,000 rows each), for monitoring and benchmarks.
    public var rowQueries: Int { fetches.withLock { $0 } }

    struct StoreKey: Hashable {
        let table: String
        let key: String
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
        await waitUntilListening()
        let table = try await table(for: R.self)
        let key = StoreKey(table: table.qualifiedName, key: Self.keyText(id))
        if let existing = stores.withLock({ $0[key]?.store }) as? LiveStore<R> {
            return existing.handle()
        }
        guard let row = try await table.fetch([id]).first else {
            throw LiveRecordError.notFound(table: table.qualifiedName, key: key.key)
        }
        let fresh = LiveStore(id: id, record: row.record, version: row.version, table: table, policy: policy, report: report)
        let store = stores.withLock { stores -> LiveStore<R> in
            if let raced = stores[key]?.store as? LiveStore<R> { return raced }
            stores[key] = WeakStore(store: fresh)
            pruneAt.withLock { threshold in
                // Amortized: the map never holds more than about twice the live stores.
                guard stores.count > threshold else { return }
                stores = stores.filter { $0.value.store != nil }
                threshold = max(1024, stores.count * 2)
            }
            return fresh
        }
        if let newer = announced.withLock({ $0[key] }), newer > store.knownVersion {
            try await store.refresh([store])
        }
        return store.handle()
    }

    private func table<R: Record>(for _: R.Type) async throws -> RecordTable<R> {
        if let known = tables.withLock({ $0[ObjectIdentifier(R.self)] }) as? RecordTable<R> { return known }
        let resolved = try await RecordTable<R>.resolve(database, counter: fetches)
        tables.withLock { $0[ObjectIdentifier(R.self)] = resolved }
        return resolved
    }

    static func keyText(_ id: some SQLValueConvertible) -> String {
        if case .text(let text) = id.sqlValue { return text }
        return "\(id)"
    }

    // MARK: - Following the feed

    /// Waits until the feed has listened once — at most `timeout`, after which reads go ahead:
    /// when the feed does connect, it re-reads every live row anyway.
    private func waitUntilListening(timeout: Duration = .seconds(10)) async {
        if listening.withLock({ $0.isOpen }) { return }
        let id = UUID()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let mustWait = listening.withLock { state in
                if !state.isOpen { state.waiters[id] = continuation }
                return !state.isOpen
            }
            guard mustWait else { return continuation.resume() }
            Task { [listening] in
                try? await Task.sleep(for: timeout)
                listening.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
            }
        }
    }

    private func startListening() {
        let waiters = listening.withLock { state in
            state.isOpen = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    private func handle(_ event: ChangeFeedEvent) async {
        switch event {
        case .changes:
            break  // already re-read on the feed's own thread, through ChangeFeedReader
        case .reconnected:
            startListening()
            scheduleRefresh(stores.withLock { stores in
                stores = stores.filter { $0.value.store != nil }
                return stores.values.compactMap(\.store)
            })
            report(.changeFeedReconnected)
        case .disconnected(let error):
            report(.changeFeedDisconnected(error))
        case .connected:
            startListening()
        case .ignored:
            break
        }
    }

    /// The live stores these changes make stale: deleted, or announced at a newer version.
    private func staleStores(for changes: [Change]) -> [any AnyLiveStore] {
        announced.withLock { announced in
            if announced.count > 100_000 { announced.removeAll() }
            for change in changes {
                let key = StoreKey(table: change.table, key: change.key.description)
                announced[key] = max(announced[key] ?? 0, change.version)
            }
        }
        return stores.withLock { stores in
            changes.compactMap { change in
                guard let store = stores[StoreKey(table: change.table, key: change.key.description)]?.store else { return nil }
                return change.operation == .delete || change.version > store.knownVersion ? store : nil
            }
        }
    }

    /// Queues stale stores for one refresh worker, so announcements that arrive while it
    /// reads are re-read together in the next batch rather than one query per announcement.
    private func scheduleRefresh(_ stale: [any AnyLiveStore]) {
        guard !stale.isEmpty else { return }
        let startWorker = pendingRefresh.withLock { pending in
            for store in stale { pending.stores[ObjectIdentifier(store)] = store }
            defer { pending.isRunning = true }
            return !pending.isRunning
        }
        guard startWorker else { return }
        Task {
            while let batch = pendingRefresh.withLock({ pending -> [any AnyLiveStore]? in
                guard !pending.stores.isEmpty else { pending.isRunning = false; return nil }
                defer { pending.stores.removeAll() }
                return Array(pending.stores.values)
            }) {
                await refresh(batch)
            }
        }
    }

    /// Re-reads stores, batched queries per table.
    private func refresh(_ stale: [any AnyLiveStore]) async {
        let byType = Dictionary(grouping: stale) { ObjectIdentifier(type(of: $0)) }
        for group in byType.values {
            do {
                try await group[0].refresh(group)
            } catch {
                report(.refreshFailed(table: group[0].tableName, error))
            }
        }
    }
}

extension LiveRepository: ChangeFeedReader {
    /// The most stale rows the feed's thread re-reads itself.
    static let feedThreadRefreshLimit = 64

    /// Re-reads the announced rows that live handles hold, on the feed's thread and connection.
    func refresh(_ changes: [Change], using query: (String, [SQLValue]) throws -> QueryResult) {
        let stale = staleStores(for: changes)
        // A few rows: re-read here, with no hop. A burst: hand it to the pool's worker, so the
        // feed goes on receiving while the rows are re-read on another thread.
        guard stale.count <= Self.feedThreadRefreshLimit else { return scheduleRefresh(stale) }
        for group in Dictionary(grouping: stale, by: { ObjectIdentifier(type(of: $0)) }).values {
            do {
                try group[0].refresh(group, using: query)
            } catch {
                // Re-read later through the pool instead.
                report(.refreshFailed(table: group[0].tableName, error))
                scheduleRefresh(group)
            }
        }
    }
}

