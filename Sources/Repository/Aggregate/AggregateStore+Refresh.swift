/// What the repository needs of an aggregate's store without knowing its type.
protocol AnyAggregateStore: AnyLiveStore {
    /// The committed version of the child row with this key, nil if it is not one of ours.
    func childVersion(forKey key: String) -> Int64?
}

extension AggregateStore: AnyAggregateStore {
    var tableName: String { table.qualifiedName }
    var storeKey: LiveRepository.StoreKey { .init(table: table.qualifiedName, key: keyText, isAggregate: true) }

    func childVersion(forKey key: String) -> Int64? {
        childVersions.first { LiveRepository.keyText($0.key) == key }?.value
    }

    func refresh(_ stores: [any AnyLiveStore]) async throws {
        let typed = stores.compactMap { $0 as? AggregateStore<A> }
        let sequences = typed.map { $0.startRead() }
        apply(try await table.fetch(typed.map(\.id)), to: typed, sequences: sequences)
    }

    func refresh(_ stores: [any AnyLiveStore], using query: (String, [SQLValue]) throws -> QueryResult) throws {
        let typed = stores.compactMap { $0 as? AggregateStore<A> }
        let sequences = typed.map { $0.startRead() }
        apply(try table.fetch(typed.map(\.id), using: query), to: typed, sequences: sequences)
    }

    /// Applies re-read aggregates; a store whose root did not come back was deleted.
    private func apply(_ snapshots: [AggregateSnapshot<A>], to typed: [AggregateStore<A>], sequences: [UInt64]) {
        let byID = Dictionary(snapshots.map { ($0.value.id, $0) }, uniquingKeysWith: { first, _ in first })
        for (store, sequence) in zip(typed, sequences) {
            if let snapshot = byID[store.id] {
                store.applyRemote(snapshot, sequence: sequence)
            } else {
                store.markDeleted()
            }
        }
    }
}
