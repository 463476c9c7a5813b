/// What the repository needs of a live store without knowing its record type.
protocol AnyLiveStore: AnyObject, Sendable {
    var knownVersion: Int64 { get }
    var keyText: String { get }
    /// Whether the row still exists; a deleted store is replaced when the key is read again.
    var state: LiveState { get }
    var tableName: String { get }
    /// Where the identity map keeps it.
    var storeKey: LiveRepository.StoreKey { get }
    /// Re-reads these stores (all of this one's type and table) and applies what changed.
    func refresh(_ stores: [any AnyLiveStore]) async throws
    /// The same, through the change feed's connection, on its thread.
    func refresh(_ stores: [any AnyLiveStore], using query: (String, [SQLValue]) throws -> QueryResult) throws
}

extension LiveStore: AnyLiveStore {
    var tableName: String { table.qualifiedName }
    var storeKey: LiveRepository.StoreKey { .init(table: table.qualifiedName, key: keyText) }

    func refresh(_ stores: [any AnyLiveStore]) async throws {
        let typed = stores.compactMap { $0 as? LiveStore<R> }
        apply(try await table.fetch(typed.map(\.id)), to: typed)
    }

    func refresh(_ stores: [any AnyLiveStore], using query: (String, [SQLValue]) throws -> QueryResult) throws {
        let typed = stores.compactMap { $0 as? LiveStore<R> }
        apply(try table.fetch(typed.map(\.id), using: query), to: typed)
    }

    /// Applies re-read rows; a store whose row did not come back was deleted.
    private func apply(_ rows: [(record: R, version: Int64)], to typed: [LiveStore<R>]) {
        let byKey = Dictionary(rows.map { ($0.record.id, $0) }, uniquingKeysWith: { first, _ in first })
        for store in typed {
            if let row = byKey[store.id] {
                store.applyRemote(row.record, version: row.version)
            } else {
                store.markDeleted()
            }
        }
    }
}

/// A weak reference: the repository keeps a store only while some handle does.
struct WeakStore: Sendable {
    weak var store: (any AnyLiveStore)?
}
extension LiveStore: MemberStore {}
