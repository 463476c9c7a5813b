/// The per-type work of live records — re-reading a group of stores of one type and applying
/// the rows, taking the rows the replication stream carried — as functions made where the
/// record type is known.
///
/// The engine (``LiveStore``, ``SyncState``, ``ObservedState``) is generic over the user's
/// record type, and the change feed reaches the stores through ``AnyLiveStore``: called through
/// it, the engine runs the library's unspecialized code, which looks up type metadata and copies
/// values through witness tables on every row. The public entry points that name a record type
/// are `@inlinable` and register ``specialized(for:)`` (``LiveRepository/useEngine(_:)``):
/// inlined into the caller's module, where the type is concrete, its functions and the
/// `@inlinable` per-row path below them are compiled for that type. Stores of a type no such
/// entry point named run through their own witnesses.
@usableFromInline
struct StoreEngine: Sendable {
    /// Re-reads these stores (all of one type) through the pool, and applies the rows.
    let refresh: @Sendable (StoreGroup) async throws -> Void
    /// The same, through the change feed's connection, on its thread.
    let refreshOnFeed: @Sendable (StoreGroup, FeedQuery) throws -> Void
    /// Takes the rows the replication stream delivered (see ``AnyLiveStore/takeStreamed(_:)``).
    let takeStreamed: @Sendable (StreamedGroup) -> StoreGroup
    /// Which stores it is for.
    let storeType: ObjectIdentifier

    @usableFromInline
    init(refresh: @escaping @Sendable (StoreGroup) async throws -> Void,
         refreshOnFeed: @escaping @Sendable (StoreGroup, FeedQuery) throws -> Void,
         takeStreamed: @escaping @Sendable (StreamedGroup) -> StoreGroup,
         storeType: ObjectIdentifier) {
        (self.refresh, self.refreshOnFeed, self.takeStreamed, self.storeType) = (refresh, refreshOnFeed, takeStreamed, storeType)
    }

    /// The engine of `R`'s live records, made where this is called: inlined into the caller's
    /// module, with the caller's type.
    @inlinable
    static func specialized<R: Record>(for _: R.Type) -> StoreEngine {
        typealias Store = LiveStore<RecordTable<R>>
        return StoreEngine(refresh: { try await Store.refresh(group: $0.stores) },
                           refreshOnFeed: { try Store.refresh(group: $0.stores, using: $1) },
                           takeStreamed: { StoreGroup(Store.takeStreamed(group: $0)) },
                           storeType: ObjectIdentifier(Store.self))
    }

    /// The engine of `store`'s type, through its own witnesses.
    static func unspecialized(of store: any AnyLiveStore) -> StoreEngine {
        StoreEngine(refresh: { try await $0.stores[0].refresh($0.stores) },
                    refreshOnFeed: { try $0.stores[0].refresh($0.stores, using: $1) },
                    takeStreamed: { StoreGroup($0.stores.first?.takeStreamed($0) ?? []) },
                    storeType: ObjectIdentifier(type(of: store)))
    }
}

/// Stores of one type, handed to a ``StoreEngine``.
@usableFromInline
struct StoreGroup: Sendable {
    @usableFromInline let stores: [any AnyLiveStore]
    @usableFromInline init(_ stores: [any AnyLiveStore]) { self.stores = stores }
}

/// Stores of one type with what the replication stream delivered for each: its change's
/// operation and version, and the row. Kept as one list per field, so that taking them copies
/// no change whole.
@usableFromInline
struct StreamedGroup: Sendable {
    @usableFromInline private(set) var stores: [any AnyLiveStore] = []
    @usableFromInline private(set) var operations: [Change.Operation] = []
    @usableFromInline private(set) var versions: [Int64] = []
    @usableFromInline private(set) var rows: [StreamedRow?] = []

    init() {}

    /// Adds `store`, for which the stream delivered `change`.
    mutating func append(_ store: any AnyLiveStore, _ change: Change) {
        stores.append(store)
        operations.append(change.operation)
        versions.append(change.version)
        rows.append(change.row)
    }
}

/// Engines registered by type (see ``StoreEngine``).
struct StoreEngines: Sendable {
    private var byType: [ObjectIdentifier: StoreEngine] = [:]

    /// Keeps `engine` for its stores, unless one is kept already.
    mutating func add(_ engine: StoreEngine) {
        if byType[engine.storeType] == nil { byType[engine.storeType] = engine }
    }

    /// Whether an engine made for `store`'s type is kept (otherwise its stores run through their
    /// own witnesses).
    func isRegistered(for store: any AnyLiveStore) -> Bool {
        byType[ObjectIdentifier(type(of: store))] != nil
    }

    /// The engine for `store`'s type.
    func engine(for store: any AnyLiveStore) -> StoreEngine {
        byType[ObjectIdentifier(type(of: store))] ?? .unspecialized(of: store)
    }
}

extension LiveRepository {
    /// Runs the stores of `engine`'s type with it, from now on.
    @usableFromInline
    func useEngine(_ engine: StoreEngine) {
        engines.withLock { $0.add(engine) }
    }

    /// The engine of `store`'s type.
    func engine(for store: any AnyLiveStore) -> StoreEngine {
        engines.withLock { $0.engine(for: store) }
    }
}
