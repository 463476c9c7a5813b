/// A router after an outage of the change feed: every live row of its type is read again
/// through it, not in batches of its own. Re-read 1,000 at a time beside the queries, each
/// batch reaching member stores would be one update of their lists: a list part old, part new.
extension RecordQueryRouter {
    /// Every query runs whole again; then `stores` — the live stores of its record type, all
    /// of them, members or not — have their rows routed: read by key once more, each given to
    /// its store and to the queries it enters or leaves, in one update per list. A store no
    /// query holds any more (one left, or its query went away meanwhile) is read all the same.
    func resync(_ stores: [any AnyLiveStore]) {
        let ids = stores.compactMap { ($0 as? LiveStore<RecordTable<R>>)?.id }
        if routes.withLock({ $0.resync(ids) }) { startLoop() }
    }

    /// Rows whose routing failed — all of a pass's, when one of them does not decode (a value
    /// its type cannot hold) or one statement fails — are read again by their stores on their
    /// own, as rows no query holds are: each one that decodes is applied, the others' stores
    /// stay as they were and report it. Their lists may then change in parts; the failure is
    /// reported either way.
    func rereadApart(_ keys: [R.ID]) {
        guard !keys.isEmpty, let repository else { return }
        let stores: [any AnyLiveStore] = heldStores(keys, in: repository).compactMap { $0?.store }
        repository.scheduleRefresh(stores)
    }
}
