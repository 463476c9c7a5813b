/// One entry of the identity map: the live stores of one row (or of an aggregate rooted at it),
/// one per Swift type reading it — two record types over one table each keep a store of their
/// own, and both follow the row. Held weakly: the repository keeps a store only while some
/// handle does.
struct IdentityEntry: Sendable {
    private struct Weak: Sendable {
        weak var store: (any AnyLiveStore)?
    }

    private var stores: [Weak] = []

    /// The live store of type `Store`, if one is held.
    func store<Store: AnyLiveStore>(as _: Store.Type) -> Store? {
        for entry in stores { if let store = entry.store as? Store { return store } }
        return nil
    }

    /// Every live store of the row, whatever its type.
    var all: [any AnyLiveStore] { stores.compactMap(\.store) }

    /// Calls `body` with each live store of the row (no array made: this runs for every
    /// announced row).
    func forEachStore(_ body: (any AnyLiveStore) -> Void) {
        for entry in stores { if let store = entry.store { body(store) } }
    }

    /// Whether no store of the row is held any more.
    var isEmpty: Bool { !stores.contains { $0.store != nil } }

    /// Adds `store`, dropping the stores nobody holds any more (the caller holds none of its type).
    mutating func add(_ store: any AnyLiveStore) {
        stores.removeAll { $0.store == nil }
        stores.append(Weak(store: store))
    }
}
