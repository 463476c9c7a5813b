/// What a router's queries hold across a whole run: after an outage every live row is read
/// again, and a query's members must get theirs from the query's own run — one statement, one
/// update of its list — not one batch of 1,000 rows at a time, which would show the list part
/// old and part new while the batches come in.
extension RecordQueryRouter {
    /// The live stores its queries hold as members now: a whole run of each query gives them
    /// their rows (see ``LiveRepository/resyncEverything()``).
    func memberStores() -> Set<ObjectIdentifier> {
        var found = Set<ObjectIdentifier>()
        for query in queries.withLock({ $0.values.compactMap(\.query) }) {
            for member in query.members.values {
                if let lease = member.store as? StoreLease<RecordTable<R>> { found.insert(ObjectIdentifier(lease.store)) }
            }
        }
        return found
    }

    /// The stores of `query`'s members, as they were before a whole run.
    static func stores(of members: [R.ID: QueryState<R>.Member]) -> [R.ID: LiveStore<RecordTable<R>>] {
        members.compactMapValues { ($0.store as? StoreLease<RecordTable<R>>)?.store }
    }

    /// After a whole run of `query`, those of `before` that are no longer its members, whose
    /// rows the run did not read (they no longer match), read their own — all of them when the
    /// run failed.
    func rereadLeavers(of query: LiveQueryStore<R>, before: [R.ID: LiveStore<RecordTable<R>>], runFailed: Bool = false) {
        guard !before.isEmpty, let repository else { return }
        let members = runFailed ? [:] : query.members
        let left: [any AnyLiveStore] = before.compactMap { members[$0.key] == nil ? $0.value : nil }
        if !left.isEmpty { repository.scheduleRefresh(left) }
    }
}
