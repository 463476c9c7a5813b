/// Which aggregates a live query over aggregates holds: those whose root rows a live query over
/// the root table holds. That query is routed like any other over its table; the aggregate
/// query is told the ids that joined or left it, and reads its members from it.
final class AggregateMembership<Root: Record & Equatable>: Sendable where Root.ID: Comparable {
    /// The live query over the root rows; held here, so it lives as long as the aggregate query.
    private let roots: LiveQueryStore<Root>
    private let subscription = Locked<Subscription?>(nil)

    init(_ roots: LiveQueryStore<Root>) {
        self.roots = roots
    }

    deinit { subscription.withLock { $0 }?.cancel() }

    /// The ids among `ids` whose root rows match now (all of them, in the root query's order,
    /// for nil).
    func members(among ids: [Root.ID]?) -> [Root.ID] {
        let elements = roots.elements
        guard let ids else { return Array(elements.ids) }
        return ids.filter { elements[id: $0] != nil }
    }

    /// Calls `changed` with the ids of root rows that join or leave the root query from now on.
    func follow(_ changed: @escaping @Sendable ([Root.ID]) -> Void) {
        let subscription = roots.handle().observe { update in
            let changes = update.changes()
            if !changes.inserted.isEmpty || !changes.removed.isEmpty { changed(changes.inserted + changes.removed) }
        }
        self.subscription.withLock { $0 = subscription }
    }
}
