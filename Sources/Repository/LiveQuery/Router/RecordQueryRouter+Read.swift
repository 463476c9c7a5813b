/// The router's read of announced rows: one statement per 1,000 keys for every query at once.
/// Rows the replication stream carried whole are routed as they are, with no read.
extension RecordQueryRouter {
    /// Reads the rows with these keys once — with a match column for each query the server
    /// checks — and gives each query the rows it may concern, in one update each; then the rows
    /// to their stores, once. Of the rows in `streamed` (the stream's latest for those keys),
    /// none is read unless the server checks some query: its statement reads them anyway.
    func route(_ keys: [R.ID], streamed: [R.ID: StreamedRow] = [:]) async throws {
        guard let repository else { return }
        let number = repository.sequence.next()
        var rows: [R.ID: Committed<RecordContent<R>>] = [:]
        var reads: [ObjectIdentifier: (checked: [R.ID], matching: [R.ID])] = [:]
        var mustRunWhole: Set<ObjectIdentifier> = []
        /// The verdicts on the row `id` holds now (nil `values`: it is gone) go to each query's read.
        func sort(_ id: R.ID, _ values: inout ResultRowValues?, server: [ObjectIdentifier: Bool]) {
            for (query, member) in verdicts(for: id, row: &values, server: server) {
                guard let member else {
                    mustRunWhole.insert(query)
                    continue
                }
                reads[query, default: ([], [])].checked.append(id)
                if member { reads[query, default: ([], [])].matching.append(id) }
            }
        }
        let taken = streamed.isEmpty || serverCheckedCount > 0 ? [] : takeStreamed(streamed)
        for var row in taken {
            rows[row.id] = row.committed
            sort(row.id, &row.values, server: [:])
        }
        let toRead = taken.isEmpty ? keys : keys.filter { id in streamed[id] == nil || rows[id] == nil }
        for start in stride(from: 0, to: toRead.count, by: 1000) {
            let chunk = Array(toRead[start..<min(start + 1000, toRead.count)])
            var (sql, values, serverColumns, skipped) = try statement(chunk)
            mustRunWhole.formUnion(skipped)
            let result: QueryResult
            do {
                result = try await repository.database.query(sql, values)
            } catch let error as PostgresError where error.kind == .server && !serverColumns.isEmpty {
                // One query's condition failed on some row (a division by zero, say): read the
                // rows without the server's checks, and let those queries run whole, each on its
                // own — only the one whose condition fails reports it.
                mustRunWhole.formUnion(serverColumns.keys)
                (sql, values, serverColumns, _) = try statement(chunk, serverChecks: false)
                result = try await repository.database.query(sql, values)
            }
            repository.reads.withLock { $0.queries += 1; $0.rows += result.count }
            repository.metrics.rowsReread.increment(by: result.count)
            guard !result.isEmpty else { continue }
            let positions = Dictionary(result.columns.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
            let serverPositions = serverColumns.compactMapValues { positions[$0] }
            for ((record, version), row) in zip(try RecordTable<R>.decode(result), result) {
                rows[record.id] = Committed(value: record, version: version)
                var values: ResultRowValues? = ResultRowValues(result, row: row.index, positions: positions, columns: columns)
                sort(record.id, &values, server: try serverPositions.mapValues { try row.decode(Bool.self, at: $0) })
            }
        }
        // Rows that are gone leave the queries that hold them.
        for id in toRead where rows[id] == nil {
            var gone: ResultRowValues? = nil
            sort(id, &gone, server: [:])
        }
        try await deliver(reads, rows: rows, keys: keys, streamed: Set(taken.map { $0.id }), readAs: number)
        for query in mustRunWhole { self.mustRunWhole(query) }
    }

    /// Gives each query its read (the list first), then every row read to its live store —
    /// matching or not, if one is held — and deletes the stores of rows that are gone; then
    /// each query shows what its member stores hold. The stores of `streamed` rows take them
    /// from the stream themselves (see ``SyncState/streamed(_:version:at:row:sequence:)``):
    /// only a row that enters a query with no store yet is read, for the store it needs.
    private func deliver(_ reads: [ObjectIdentifier: (checked: [R.ID], matching: [R.ID])],
                         rows: [R.ID: Committed<RecordContent<R>>], keys: [R.ID], streamed: Set<R.ID>,
                         readAs number: UInt64) async throws {
        guard let repository else { return }
        let matchingIDs = Set(reads.values.flatMap(\.matching))
        let stores = try await repository.sharedStores(table, ids: matchingIDs.filter { !streamed.contains($0) }, readAs: number) { ids in
            ids.compactMap { id in rows[id].map { (id, $0) } }
        }
        let streamedStores = streamed.isEmpty ? [] : try await repository.sharedStores(table, ids: matchingIDs.filter(streamed.contains))
        let storeByID = Dictionary((stores + streamedStores).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var applied: [(LiveQueryStore<R>, QueryState<R>.Read)] = []
        for (id, found) in reads {
            guard let query = liveQuery(id) else { continue }
            let matching: [(element: R, store: any MemberStore<R>)] = found.matching.compactMap { key in
                guard let store = storeByID[key], let row = rows[key] else { return nil }
                return (store.overlayingLocalEdits(on: row.value), store)
            }
            let read = QueryState<R>.Read(checked: found.checked, matching: matching)
            query.apply(read)
            record(id, checked: found.checked, matching: Set(matching.map(\.element.id)))
            applied.append((query, read))
        }
        let others = keys.filter { storeByID[$0] == nil && !streamed.contains($0) }
        let held = repository.stores.withLock { stores in
            others.map { (id: $0, store: stores[LiveRepository.StoreKey(table: table.qualifiedName, key: LiveRepository.keyText($0))]?.store as? LiveStore<RecordTable<R>>) }
        }
        // Its queries' member observers are not told of these updates: each query already holds
        // the rows, and its mirror below shows what the stores made of them.
        QueryHandOver.run(by: self) {
            for store in stores { store.applyRead(rows[store.id], sequence: number) }
            for (id, store) in held { store?.applyRead(rows[id], sequence: number) }
        }
        for (query, read) in applied { query.mirror(read) }
    }

    /// The rows the stream carried, decoded, with their values for the conditions evaluated
    /// here; a row that does not decode (or whose columns are not the table's as this process
    /// reads it) is left out, to be read.
    private func takeStreamed(_ streamed: [R.ID: StreamedRow]) -> [(id: R.ID, committed: Committed<RecordContent<R>>, values: ResultRowValues?)] {
        guard let expected = table.streamColumns else { return [] }
        var taken: [(id: R.ID, committed: Committed<RecordContent<R>>, values: ResultRowValues?)] = []
        taken.reserveCapacity(streamed.count)
        // A batch of rows of the same columns at a time (the table may be altered between two).
        for run in Dictionary(grouping: streamed.values, by: \.columns).values where run[0].columns.map(\.name) == expected {
            let result = StreamedRow.result(run)
            guard let decoded = try? RecordTable<R>.decode(result) else { continue }
            let positions = Dictionary(result.columns.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
            for ((record, version), row) in zip(decoded, result) where streamed[record.id] != nil {
                let values = ResultRowValues(result, row: row.index, positions: positions, columns: columns)
                taken.append((record.id, Committed(value: record, version: version), values))
            }
        }
        return taken
    }

    /// The statement reading these rows, with a match column (named in `serverColumns`) for each
    /// query the server checks; queries whose conditions could not join it (too many
    /// parameters for one statement, a condition that cannot be renumbered) are `skipped`.
    private func statement(_ ids: [R.ID], serverChecks: Bool = true) throws -> (String, [SQLValue], serverColumns: [ObjectIdentifier: String], skipped: Set<ObjectIdentifier>) {
        var values = try table.key.arrays(of: ids)
        var select = [RowVersion.rowAndVersion]
        var serverColumns: [ObjectIdentifier: String] = [:]
        var skipped: Set<ObjectIdentifier> = []
        for (position, (id, predicate)) in (serverChecks ? serverChecked() : []).enumerated() {
            guard let condition = predicate.condition, values.count + predicate.parameters.count < 60_000,
                  let renumbered = ConditionLexer.renumbered(condition, by: values.count) else {
                skipped.insert(id)
                continue
            }
            let name = "live.server.\(position)"
            select.append("(\(renumbered)) IS TRUE AS \(SQLIdentifier.quoted(name))")
            serverColumns[id] = name
            values += predicate.parameters
        }
        return ("SELECT \(select.joined(separator: ", ")) FROM \(table.quoted) WHERE \(table.key.isAny(parameter: 1))", values, serverColumns, skipped)
    }
}
