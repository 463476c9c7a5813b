/// One entry of the identity map: the live stores of one row (or of an aggregate rooted at it),
/// one per Swift type reading it — two record types over one table each keep a store of their
/// own, and both follow the row. Held through their leases, weakly: the repository keeps a
/// store only while some handle or live query holds its lease (see ``StoreLease``).
@usableFromInline
struct IdentityEntry: Sendable {
    private struct Weak: Sendable {
        weak var lease: (any AnyStoreLease)?
    }

    private var leases: [Weak] = []

    /// The lease of the live store of type `LiveStore<Table>`, if one is held.
    @usableFromInline func lease<Table>(as _: StoreLease<Table>.Type) -> StoreLease<Table>? {
        for index in leases.indices { if let lease = leases[index].lease as? StoreLease<Table> { return lease } }
        return nil
    }

    /// The live store of type `LiveStore<Table>`, if one is held.
    func store<Table>(as _: LiveStore<Table>.Type) -> LiveStore<Table>? {
        lease(as: StoreLease<Table>.self)?.store
    }

    /// Every live store of the row, whatever its type.
    var all: [any AnyLiveStore] { leases.compactMap { $0.lease?.anyStore } }

    /// Calls `body` with each live store of the row (no array made: this runs for every
    /// announced row); whether there was one.
    @discardableResult
    func forEachStore(_ body: (any AnyLiveStore) -> Void) -> Bool {
        var found = false
        // By index: iterating would copy each weak reference.
        for index in leases.indices { if let lease = leases[index].lease { body(lease.anyStore); found = true } }
        return found
    }

    /// Whether no store of the row is held any more.
    var isEmpty: Bool {
        for index in leases.indices where leases[index].lease != nil { return false }
        return true
    }

    /// Adds `lease`, dropping those nobody holds any more (the caller holds none of its type).
    mutating func add(_ lease: any AnyStoreLease) {
        leases.removeAll { $0.lease == nil }
        leases.append(Weak(lease: lease))
    }
}
