/// Which rows from the logical replication stream the router places as they are.
extension RecordQueryRouter {
    /// The most streamed rows one batch places as they are; a larger batch is read, in one
    /// statement per 1,000 rows. Placing a row cost this process about 20 µs more than reading
    /// it in a large batch did, so a large statement is cheaper read; a few rows are cheaper
    /// placed than a round trip. (`bench --only replication`, 5,000-row UPDATE under a
    /// 10,000-row query: placed, 271–282 ms; read, 194–208 ms. Again once the router's pass
    /// was compiled for the record type, ``RoutePass``, 3 alternating pairs: placed 187 / 260 /
    /// 152 ms, 33.8 / 41.1 / 35.1 µs CPU per updated row; read 124 / 122 / 385 ms — the last
    /// beside a test run —, 27.0 / 23.0 / 28.2 µs. Once the rows placed were chosen in code
    /// compiled for the type too, 3 alternating pairs: placed 21.5 / 16.3 / 16.9 µs per row,
    /// read 13.8 / 12.5 / 12.5 µs.)
    @usableFromInline static var mostStreamedRowsPlaced: Int { 100 }

    /// A row the stream carried, decoded, with its values for the conditions evaluated here,
    /// and the live value (if any) that takes it.
    @usableFromInline struct UsableStreamedRow {
        @usableFromInline let id: R.ID
        @usableFromInline let committed: Committed<RecordContent<R>>
        @usableFromInline var values: ResultRowValues?
        @usableFromInline let lease: StoreLease<RecordTable<R>>?
        @usableFromInline let change: Change

        @usableFromInline init(id: R.ID, committed: Committed<RecordContent<R>>, values: ResultRowValues?, lease: StoreLease<RecordTable<R>>?, change: Change) {
            (self.id, self.committed, self.values, self.lease, self.change) = (id, committed, values, lease, change)
        }
    }

    /// Of the rows in these changes (each key's latest, which carried its row), those placed as
    /// they are, with no read. A row is read instead when: some query's condition is checked by
    /// the server (its statement reads the rows anyway); the row does not decode, or its columns
    /// are not the table's as this process reads it; its live value cannot take it (it does not
    /// hold the stream's previous version of the row: see
    /// ``SyncState/streamed(_:version:at:row:sequence:)``); or it enters a query with no live
    /// value yet, which needs one. So a list and its members' values come from the same rows.
    @inlinable func usableStreamedRows(_ changes: [R.ID: Change]) -> [UsableStreamedRow] {
        guard let repository, let expected = table.streamColumns, serverCheckedCount == 0 else { return [] }
        // Plain lists walked by index, and this function compiled for `R` (it is `@inlinable`):
        // in generic code, tuples of a row, its change and its store, zipped and grouped, were
        // copied through their witnesses on every step — most of a large batch's cost.
        var ids: [R.ID] = [], rows: [StreamedRow] = [], rowChanges: [Change] = []
        ids.reserveCapacity(changes.count)
        rows.reserveCapacity(changes.count)
        rowChanges.reserveCapacity(changes.count)
        for (id, change) in changes {
            guard let row = change.row else { continue }
            ids.append(id)
            rows.append(row)
            rowChanges.append(change)
        }
        let held = heldStores(ids, in: repository)
        var usable: [UsableStreamedRow] = []
        usable.reserveCapacity(rows.count)
        // A batch of rows of the same columns at a time (the table may be altered between two).
        for run in StreamedRow.layoutRuns(rows) where run.columns.map(\.name) == expected {
            let taking = run.rows.filter { index in held[index].map { $0.store.takesStreamed(at: rows[index].position) } ?? true }
            guard !taking.isEmpty else { continue }
            let result = StreamedRow.result(taking.map { rows[$0] })
            guard let decoded = try? RecordTable<R>.decode(result), decoded.count == taking.count else { continue }
            let positions = Dictionary(result.columns.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
            for position in taking.indices {
                let (index, (record, version)) = (taking[position], decoded[position])
                guard record.id == ids[index] else { continue }
                let values = ResultRowValues(result, row: position, positions: positions, columns: columns)
                let lease = held[index]
                if lease == nil {
                    var probe: ResultRowValues? = values
                    if verdicts(for: ids[index], row: &probe, server: [:]).contains(where: { $0.member != false }) { continue }
                }
                usable.append(UsableStreamedRow(id: ids[index], committed: Committed(value: record, version: version), values: values,
                                                lease: lease, change: rowChanges[index]))
            }
        }
        return usable
    }

    @usableFromInline func heldStores(_ ids: [R.ID], in repository: LiveRepository) -> [StoreLease<RecordTable<R>>?] {
        let keys = ids.map { LiveRepository.keyText($0) }
        return repository.identity.withLock { map in
            map.leases(as: StoreLease<RecordTable<R>>.self, in: table.qualifiedName, aggregates: false, keys: keys)
        }
    }
}
