import Foundation

/// What the repository needs of a live store without knowing its type: where it sits in the
/// identity map, whether an announcement makes it stale, and how to re-read a batch of its kind.
@usableFromInline
protocol AnyLiveStore: AnyObject, Sendable {
    var keyText: String { get }
    var tableName: String { get }
    /// The table as messages name it (``RecordTable/shownName``).
    var shownTableName: String { get }
    /// Whether the row still exists.
    var state: LiveState { get }
    /// Whether edits made here are not yet committed, superseded or failed.
    var hasUnsettledEdits: Bool { get }
    /// Where the identity map keeps it.
    var storeKey: LiveRepository.StoreKey { get }
    /// Whether this announcement of the store's own row (an aggregate's root) means it must be
    /// read: anything but an update to the version it holds, or an update while its write is
    /// under way (held until that write settles; see ``SyncState/announced(_:version:)``).
    func isStale(after change: Change) -> Bool
    /// Takes the rows the replication stream delivered for these stores, each of this one's
    /// type, where the store can (see ``SyncState/streamed(_:version:at:row:sequence:)``):
    /// the rows are decoded together. The stores that must be read.
    func takeStreamed(_ group: StreamedGroup) -> [any AnyLiveStore]
    /// For an aggregate: whether this announcement of a child row it holds may change it; nil
    /// when the row is not one of its children.
    func isStale(afterChildChange change: Change) -> Bool?
    /// Waits until the edits made so far are settled (see ``LiveStore/save()``).
    func save() async throws
    /// Re-reads these stores (all of this one's type) and applies the rows: numbered reads of
    /// up to 1,000 rows each.
    func refresh(_ stores: [any AnyLiveStore]) async throws
    /// The same, through the change feed's connection, on its thread.
    func refresh(_ stores: [any AnyLiveStore], using query: FeedQuery) throws
}

extension LiveStore: AnyLiveStore {
    @usableFromInline var tableName: String { table.qualifiedName }
    @usableFromInline var shownTableName: String { table.shownName }
    @usableFromInline var storeKey: LiveRepository.StoreKey { .init(table: table.qualifiedName, key: keyText, isAggregate: Table.holdsAggregates) }

    @usableFromInline func isStale(afterChildChange change: Change) -> Bool? {
        let (committed, state) = committed
        guard let version = Content.childVersion(forKey: change.key.description, in: committed.version) else { return nil }
        return state == .deleted || change.operation != .update || version != change.version
    }

    @usableFromInline func takeStreamed(_ group: StreamedGroup) -> [any AnyLiveStore] {
        Self.takeStreamed(group: group)
    }

    /// ``takeStreamed(_:)``, for ``StoreEngine``.
    @inlinable
    static func takeStreamed(group: StreamedGroup) -> [any AnyLiveStore] {
        // By position in the group's lists.
        var stores: [LiveStore<Table>] = []
        var positions: [Int] = []
        stores.reserveCapacity(group.stores.count)
        positions.reserveCapacity(group.stores.count)
        for position in group.stores.indices {
            guard let store = group.stores[position] as? LiveStore<Table> else { continue }
            stores.append(store)
            positions.append(position)
        }
        guard let first = stores.first else { return [] }
        // Decoded outside the stores' locks, together, and only the rows stores will take.
        var rows = [Committed<Content>?](repeating: nil, count: stores.count)
        let taking = stores.indices.filter { index in group.rows[positions[index]].map { stores[index].takesStreamed(at: $0.position) } ?? false }
        let decoded = first.table.committed(streamed: taking.map { group.rows[positions[$0]]! })
        for (index, row) in zip(taking, decoded) { rows[index] = row }
        var taken = 0
        var stale: [any AnyLiveStore] = []
        MemberBatch.run {
            for index in stores.indices {
                let position = positions[index]
                let outcome = stores[index].streamed(group.operations[position], version: group.versions[position],
                                                     at: group.rows[position]?.position, row: rows[index])
                if outcome.taken { taken += 1 }
                if outcome.stale { stale.append(stores[index]) }
            }
        }
        if taken > 0 { first.countStreamed(taken) }
        return stale
    }

    /// Reads in batches of ``refreshBatchSize`` rows, a few batches at once on pooled
    /// connections: one batch's rows are decoded and applied while the next ones are read.
    /// Each batch is its own numbered read (each store is in one batch).
    @usableFromInline func refresh(_ stores: [any AnyLiveStore]) async throws {
        try await Self.refresh(group: stores)
    }

    /// ``refresh(_:)``, for ``StoreEngine``.
    @inlinable
    static func refresh(group stores: [any AnyLiveStore]) async throws {
        let typed = stores.compactMap { $0 as? LiveStore<Table> }
        let batches = stride(from: 0, to: typed.count, by: Self.refreshBatchSize).map {
            Array(typed[$0..<min($0 + Self.refreshBatchSize, typed.count)])
        }
        guard batches.count > 1 else { return try await Self.refresh(typed) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, batch) in batches.enumerated() {
                if index >= Self.concurrentRefreshBatches { try await group.next() }
                group.addTask { try await Self.refresh(batch) }
            }
            try await group.waitForAll()
        }
    }

    /// The most rows one refresh statement reads.
    @usableFromInline static var refreshBatchSize: Int { 1000 }
    /// How many refresh batches are read and applied at once.
    @usableFromInline static var concurrentRefreshBatches: Int { min(4, max(2, ProcessInfo.processInfo.activeProcessorCount)) }

    /// One numbered read of `stores` (all of this type), applied.
    @inlinable
    static func refresh(_ stores: [LiveStore<Table>]) async throws {
        guard let first = stores.first else { return }
        let number = await first.readNumber()
        let batch = try await first.table.readBatch(stores.map { $0.id })
        first.countReread(batch.rowCount)
        try apply(batch, to: stores, sequence: number)
    }

    @usableFromInline func refresh(_ stores: [any AnyLiveStore], using query: FeedQuery) throws {
        try Self.refresh(group: stores, using: query)
    }

    /// ``refresh(_:using:)``, for ``StoreEngine``.
    @inlinable
    static func refresh(group stores: [any AnyLiveStore], using query: FeedQuery) throws {
        let typed = stores.compactMap { $0 as? LiveStore<Table> }
        guard let first = typed.first else { return }
        let number = first.sequenceNumber()
        let batch = try first.table.readBatch(typed.map { $0.id }, using: query)
        first.countReread(batch.rowCount)
        try apply(batch, to: typed, sequence: number)
    }

    /// Applies a read numbered `sequence` of `stores`' rows (``ReadBatch``, by position): a row at
    /// the version its store holds only confirms it; a store whose row did not come back was
    /// deleted. A row that does not decode leaves its store as it was, and is thrown once the
    /// others are applied.
    @inlinable
    static func apply(_ batch: ReadBatch<Content>, to stores: [LiveStore<Table>], sequence: UInt64) throws {
        var failure: (any Error)?
        MemberBatch.run {
            // By index: in code not specialized for the content, a zip's iterator looks up its
            // runtime metadata on every step.
            for position in stores.indices {
                let store = stores[position]
                switch batch.found[position] {
                case nil:
                    store.applyRead(nil, sequence: sequence)
                case .decoded(let row)?:
                    store.applyRead(row, sequence: sequence)
                case .row(let index, let version)?:
                    do {
                        try store.applyRead(version: version, sequence: sequence) { try batch.decode(index) }
                    } catch var error as ColumnDecodingError {
                        // Of many rows, which one.
                        error.name(row: store.keyText)
                        failure = failure ?? error
                    } catch {
                        failure = failure ?? error
                    }
                }
            }
        }
        if let failure { throw failure }
    }
}

