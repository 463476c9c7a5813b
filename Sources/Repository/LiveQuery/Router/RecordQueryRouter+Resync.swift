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
}
