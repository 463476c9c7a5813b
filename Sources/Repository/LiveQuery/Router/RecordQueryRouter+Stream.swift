/// Which rows from the logical replication stream the router places as they are.
extension RecordQueryRouter {
    /// The most streamed rows one batch places as they are; a larger batch is read, in one
    /// statement per 1,000 rows. Placing a row cost this process about 20 µs more than reading
    /// it in a large batch did, so a large statement is cheaper read; a few rows are cheaper
    /// placed than a round trip. (`bench --only replication`, 5,000-row UPDATE under a
    /// 10,000-row query: placed, 271–282 ms; read, 194–208 ms. Again once the router's pass
    /// was compiled for the record type, ``RoutePass``, 3 alternating pairs: placed 187 / 260 /
    /// 152 ms, 33.8 / 41.1 / 35.1 µs CPU per updated row; read 124 / 122 / 385 ms — the last
    /// beside a test run —, 27.0 / 23.0 / 28.2 µs.)
    @usableFromInline static var mostStreamedRowsPlaced: Int { 100 }

    /// A row the stream carried, decoded, with its values for the conditions evaluated here,
    /// and the live value (if any) that takes it.
    @usableFromInline struct UsableStreamedRow {
        @usableFromInline let id: R.ID
        @usableFromInline let committed: Committed<RecordContent<R>>
        @usableFromInline var values: ResultRowValues?
        @usableFromInline let lease: StoreLease<RecordTable<R>>?
        @usableFromInline let change: Change
    }

    /// Of the rows in these changes (each key's latest, which carried its row), those placed as
    /// they are, with no read. A row is read instead when: some query's condition is checked by
    /// the server (its statement reads the rows anyway); the row does not decode, or its columns
    /// are not the table's as this process reads it; its live value cannot take it (it does not
    /// hold the stream's previous version of the row: see
    /// ``SyncState/streamed(_:version:at:row:sequence:)``); or it enters a query with no live
    /// value yet, which needs one. So a list and its members' values come from the same rows.
    @usableFromInline func usableStreamedRows(_ changes: [R.ID: Change]) -> [UsableStreamedRow] {
        guard let repository, let expected = table.streamColumns, serverCheckedCount == 0 else { return [] }
        let rows = changes.compactMap { id, change in change.row.map { (id: id, row: $0, change: change) } }
        let held = heldStores(rows.map(\.id), in: repository)
        var usable: [UsableStreamedRow] = []
        usable.reserveCapacity(rows.count)
        // A batch of rows of the same columns at a time (the table may be altered between two).
        for (layout, run) in Dictionary(grouping: zip(rows, held), by: { $0.0.row.columns }) where layout.map(\.name) == expected {
            let taking = run.filter { entry, lease in lease.map { $0.store.takesStreamed(at: entry.row.position) } ?? true }
            guard !taking.isEmpty else { continue }
            let result = StreamedRow.result(taking.map(\.0.row))
            guard let decoded = try? RecordTable<R>.decode(result) else { continue }
            let positions = Dictionary(result.columns.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
            for (((entry, lease), (record, version)), row) in zip(zip(taking, decoded), result) where record.id == entry.id {
                let values = ResultRowValues(result, row: row.index, positions: positions, columns: columns)
                if lease == nil {
                    var probe: ResultRowValues? = values
                    if verdicts(for: entry.id, row: &probe, server: [:]).contains(where: { $0.member != false }) { continue }
                }
                usable.append(UsableStreamedRow(id: entry.id, committed: Committed(value: record, version: version), values: values,
                                                lease: lease, change: entry.change))
            }
        }
        return usable
    }

    /// The leases of the live stores `repository` holds for these rows (nil where it holds
    /// none), in order, under one lock.
    @usableFromInline func heldStores(_ ids: [R.ID], in repository: LiveRepository) -> [StoreLease<RecordTable<R>>?] {
        let keys = ids.map { LiveRepository.keyText($0) }
        return repository.identity.withLock { map in
            map.leases(as: StoreLease<RecordTable<R>>.self, in: table.qualifiedName, aggregates: false, keys: keys)
        }
    }
}
