/// The router's read of announced rows: one statement per 1,000 keys for every query at once.
/// Rows the replication stream carried whole are routed as they are, with no read, where their
/// live values can take them (see ``RecordQueryRouter/usableStreamedRows(_:)``).
extension RecordQueryRouter {
    /// Reads the rows with these keys once — with a match column for each query the server
    /// checks — and gives each query the rows it may concern, in one update each; then the rows
    /// to their stores, once. Of the keys in `streamed` (their latest change, which carried the
    /// row), those whose rows can be used as they are are not read.
    @inlinable func route(_ keys: [R.ID], streamed: [R.ID: Change] = [:]) async throws {
        guard let repository else { return }
        var rows: [R.ID: Committed<RecordContent<R>>] = [:]
        var reads: [ObjectIdentifier: (checked: [R.ID], matching: [R.ID])] = [:]
        var mustRunWhole: Set<ObjectIdentifier> = []
        /// The verdicts on the row `id` holds now (nil `values`: it is gone) go to each query's read.
        func file(_ id: R.ID, _ values: inout ResultRowValues?, server: [ObjectIdentifier: Bool]) {
            forEachVerdict(for: id, row: &values, server: server) { query, member in
                guard let member else { return _ = mustRunWhole.insert(query) }
                reads[query, default: ([], [])].checked.append(id)
                if member { reads[query, default: ([], [])].matching.append(id) }
            }
        }
        let usable = streamed.isEmpty || streamed.count > Self.mostStreamedRowsPlaced ? [] : usableStreamedRows(streamed)
        var fromStream: [R.ID: (lease: StoreLease<RecordTable<R>>?, change: Change)] = [:]
        for var row in usable {
            rows[row.id] = row.committed
            fromStream[row.id] = (row.lease, row.change)
            file(row.id, &row.values, server: [:])
        }
        let toRead = usable.isEmpty ? keys : keys.filter { fromStream[$0] == nil }
        // Numbered as a read, which waits while the feed holds reads (see ``ReadSequence``) —
        // unless every row came from the stream: then, as the feed's own streamed rows, at once.
        let number = toRead.isEmpty ? repository.sequence.next() : await repository.sequence.nextRead()
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
            repository.countRead(rows: result.count)
            guard !result.isEmpty else { continue }
            let positions = Dictionary(result.columns.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
            let serverPositions = serverColumns.compactMapValues { positions[$0] }
            for ((record, version), row) in zip(try RecordTable<R>.decode(result), result) {
                try DistinctKeys.add(Committed(value: record, version: version), to: &rows, table: table.shownName)
                var values: ResultRowValues? = ResultRowValues(result, row: row.index, positions: positions, columns: columns)
                file(record.id, &values, server: try serverPositions.mapValues { try row.decode(Bool.self, at: $0) })
            }
        }
        // Rows that are gone leave the queries that hold them.
        for id in toRead where rows[id] == nil {
            var gone: ResultRowValues? = nil
            file(id, &gone, server: [:])
        }
        let readStreamed = fromStream.isEmpty ? streamed : streamed.filter { fromStream[$0.key] == nil }
        try await deliver(reads, rows: rows, keys: keys, fromStream: fromStream, readStreamed: readStreamed, readAs: number)
        for query in mustRunWhole { self.mustRunWhole(query) }
    }

    /// Gives every row read to its live store — matching or not, if one is held — and deletes
    /// the stores of rows that are gone; each row `fromStream` goes to its store as the stream's
    /// change. Then each query shows what it `found`, as its member stores now hold it: one
    /// update per list, whichever way its rows came. A store whose row the stream carried but
    /// which was read (`readStreamed`) is told of the change in the read's transition, first, as
    /// the feed tells stores no query routes for: from the version the read shows, it can take
    /// the stream's next row.
    @inlinable func deliver(_ found: [ObjectIdentifier: (checked: [R.ID], matching: [R.ID])],
                         rows: [R.ID: Committed<RecordContent<R>>], keys: [R.ID],
                         fromStream: [R.ID: (lease: StoreLease<RecordTable<R>>?, change: Change)],
                         readStreamed: [R.ID: Change], readAs number: UInt64) async throws {
        guard let repository else { return }
        // Plain loops, not key paths as functions: in code not specialized for `R`, each
        // projection through a key path costs more than the rest of the step.
        let queries = found.compactMap { id, found in liveQuery(id).map { (id: id, query: $0, found: found) } }
        // A matching row that is a member of a query already has its store there — the identity
        // map's, for as long as the query holds it —; the others' are looked up there, or made.
        var readLeases: [R.ID: StoreLease<RecordTable<R>>] = [:]
        var lookUp = Set<R.ID>()
        for (_, query, ids) in queries {
            let members = query.members
            readLeases.reserveCapacity(ids.matching.count)
            for id in ids.matching where fromStream[id] == nil && readLeases[id] == nil {
                if let lease = members[id]?.store as? StoreLease<RecordTable<R>> { readLeases[id] = lease } else { lookUp.insert(id) }
            }
        }
        let shared = lookUp.isEmpty ? [] : try await repository.sharedStores(table, ids: lookUp.filter { readLeases[$0] == nil }, readAs: number) { ids in
            ids.compactMap { id in rows[id].map { (id, $0) } }
        }
        for lease in shared { readLeases[lease.id] = lease }
        let stores = Array(readLeases.values)
        var leaseByID = readLeases
        for (id, streamed) in fromStream { leaseByID[id] = streamed.lease }
        var reads: [(LiveQueryStore<R>, QueryState<R>.Read, [LiveStore<RecordTable<R>>])] = []
        for (id, query, found) in queries {
            var matching: [(element: R, store: any MemberStore<R>)] = []
            var matchingStores: [LiveStore<RecordTable<R>>] = []
            var matchingKeys = Set<R.ID>()
            matching.reserveCapacity(found.matching.count)
            matchingStores.reserveCapacity(found.matching.count)
            matchingKeys.reserveCapacity(found.matching.count)
            for key in found.matching {
                guard let lease = leaseByID[key], let row = rows[key] else { continue }
                matching.append((row.value, lease))
                matchingStores.append(lease.store)
                matchingKeys.insert(row.value.id)
            }
            reads.append((query, QueryState<R>.Read(checked: found.checked, matching: matching, number: number), matchingStores))
            record(id, checked: found.checked, matching: matchingKeys)
        }
        let others = keys.filter { leaseByID[$0] == nil && fromStream[$0] == nil }
        let held = zip(others, heldStores(others, in: repository)).map { (id: $0, store: $1?.store) }
        // The rows to their stores first. Its queries' member observers are not told of these
        // updates: each query shows its list next, from what the stores then hold.
        var (taken, stale) = (0, [any AnyLiveStore]())
        QueryHandOver.run(by: self) {
            if readStreamed.isEmpty {
                for lease in stores { lease.store.applyRead(rows[lease.id], sequence: number) }
                for (id, store) in held { store?.applyRead(rows[id], sequence: number) }
            } else {
                for lease in stores { lease.store.applyRead(rows[lease.id], sequence: number, streamed: readStreamed[lease.id]) }
                for (id, store) in held { store?.applyRead(rows[id], sequence: number, streamed: readStreamed[id]) }
            }
            for (id, streamed) in fromStream {
                guard let store = streamed.lease?.store else { continue }
                // Numbered as this route's read: a read that started since prevails.
                let outcome = store.streamed(streamed.change, row: rows[id], numbered: number)
                if outcome.taken { taken += 1 }
                if outcome.stale { stale.append(store) }
            }
        }
        // The stores asked as what they are, not through `MemberStore`: compiled for `R`.
        for (query, read, stores) in reads { query.apply(read) { stores[$0].value } }
        if taken > 0, let lease = fromStream.values.first(where: { $0.lease != nil })?.lease { lease.store.countStreamed(taken) }
        // A live value that changed since its row was chosen (a write of its own began): read.
        repository.scheduleRefresh(stale)
    }

    /// The statement reading these rows, with a match column (named in `serverColumns`) for each
    /// query the server checks; queries whose conditions could not join it (too many
    /// parameters for one statement, a condition that cannot be renumbered) are `skipped`.
    @usableFromInline func statement(_ ids: [R.ID], serverChecks: Bool = true) throws -> (String, [SQLValue], serverColumns: [ObjectIdentifier: String], skipped: Set<ObjectIdentifier>) {
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
