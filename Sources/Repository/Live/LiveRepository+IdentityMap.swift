/// The identity map: one live store per row (and per aggregate rooted at a row), shared by
/// every handle and live query reading it, made on first read and registered under its key.
extension LiveRepository {
    /// The leases of the stores of `table`'s values with these ids (see ``StoreLease``): live
    /// ones from the identity map, the others (and deleted ones, which may have been inserted
    /// again) read by `read` — `table`'s own read unless given — as read number `number`, and
    /// registered. Missing rows are left out.
    @inlinable func sharedStores<Table: LiveTable>(
        _ table: Table, ids: [Table.ID], readAs number: UInt64? = nil,
        read: (([Table.ID]) async throws -> [(id: Table.ID, committed: Committed<Table.Content>)])? = nil,
        committedChanged: (@Sendable (LiveRepository.StoreKey, Committed<Table.Content>) -> Void)? = nil
    ) async throws -> [StoreLease<Table>] {
        try await waitUntilListening()
        let keys = ids.map { StoreKey(table: table.qualifiedName, key: Self.keyText($0), isAggregate: Table.holdsAggregates) }
        var found = identity.withLock { map in
            map.leases(as: StoreLease<Table>.self, in: table.qualifiedName, aggregates: Table.holdsAggregates, keys: keys.map(\.key))
        }
        var missing: [Int] = []
        for index in found.indices {
            guard let store = found[index]?.store else {
                missing.append(index)
                continue
            }
            let key = keys[index].key
            if !DistinctKeys.same(store.keyText, key) { throw DistinctKeys.collision(table: table.shownName, store.keyText, key) }
            if store.state == .deleted { missing.append(index) }
        }
        guard !missing.isEmpty else { return found.compactMap { $0 } }
        let number = if let number { number } else { await sequence.nextRead() }
        let rows = try await (read ?? table.read)(missing.map { ids[$0] })
        let byID = try DistinctKeys.byID(rows, table: table.shownName)
        var fresh: [LiveStore<Table>] = []
        for index in missing {
            let row = byID[ids[index]]
            if let deleted = found[index]?.store {
                deleted.applyRead(row, sequence: number)  // inserted again, or still gone
                if row == nil { found[index] = nil }
                continue
            }
            guard let row else { continue }
            let (lease, isNew) = register(keys[index]) {
                LiveStore(id: ids[index], keyText: keys[index].key, committed: row, readAs: number, table: table, context: context,
                          committedChanged: committedChanged.map { told in { [key = keys[index]] in told(key, $0) } })
            }
            if isNew { committedChanged?(keys[index], row) } else { lease.store.applyRead(row, sequence: number) }
            found[index] = lease
            fresh.append(lease.store)
        }
        await refreshAnnounced(fresh, since: number)
        return found.compactMap { $0 }
    }

    /// The lease of the store registered under `key`, or of the one `make` creates, registered
    /// now; the lease keeps this repository open.
    @usableFromInline func register<Table>(_ key: StoreKey, _ make: () -> LiveStore<Table>) -> (lease: StoreLease<Table>, isNew: Bool) {
        let (registered, count) = identity.withLock { map in (map.register(key, owner: self, make), map.count) }
        if registered.isNew { metrics.liveValues.record(count) }
        return registered
    }

    /// Re-reads the stores whose rows were announced after read number `number` started:
    /// their announcement found no store to re-read. A failure is reported, as any re-read's
    /// (and repaired, if it can pass), not thrown: the read itself succeeded, and the stores are
    /// registered, shared with other readers already.
    @usableFromInline func refreshAnnounced(_ stores: [any AnyLiveStore], since number: UInt64) async {
        let stale = identity.withLock { $0.announcedSince(number, among: stores) }
        for group in Dictionary(grouping: stale, by: { ObjectIdentifier(type(of: $0)) }).values {
            do {
                try await engine(for: group[0]).refresh(StoreGroup(group))
            } catch {
                report(.refreshFailed(table: group[0].shownTableName, error))
            }
        }
    }
}
