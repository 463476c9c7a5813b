extension RecordTable {
    /// The rows with these keys, each with its version and the position of its key, decoded
    /// only when asked: a store that holds a row at the version read does not decode it.
    @usableFromInline func readBatch(_ ids: [R.ID]) async throws -> ReadBatch<RecordContent<R>> {
        var results: [QueryResult] = []
        for (sql, parameters) in try batchSelects(ids) { results.append(try await database.query(sql, parameters)) }
        return try batch(of: results, count: ids.count)
    }

    /// The same, through `query` (the change feed's connection, on its own thread).
    @usableFromInline func readBatch(_ ids: [R.ID], using query: FeedQuery) throws -> ReadBatch<RecordContent<R>> {
        try batch(of: batchSelects(ids).map { try query($0, $1) }, count: ids.count)
    }

    /// The most keys one statement of a batch reads.
    private static var batchSize: Int { 1000 }

    /// One statement per ``batchSize`` keys, which gives each row its key's position; a single
    /// key uses `k = $1` (its row, if any, is the key's).
    private func batchSelects(_ ids: [R.ID]) throws -> [(String, [SQLValue])] {
        guard ids.count > 1 else { return try selects(ids) }
        return try stride(from: 0, to: ids.count, by: Self.batchSize).map { start in
            reads?.withLock { $0.queries += 1 }
            return (selectIndexed, try key.arrays(of: Array(ids[start..<min(start + Self.batchSize, ids.count)])))
        }
    }

    /// The rows of `results` (``batchSelects(_:)``'s, in order) for `count` keys. A key that
    /// matches two rows (a declared key that is not unique) keeps the first, as reads do.
    private func batch(of results: [QueryResult], count: Int) throws -> ReadBatch<RecordContent<R>> {
        typealias Found = ReadBatch<RecordContent<R>>.Found
        var found = [Found?](repeating: nil, count: count)
        // Each result's rows are numbered on from the previous result's.
        // The layout holds its result: the decode below copies no result per row.
        var parts: [(first: Int, layout: ColumnLayout, version: Int)] = []
        var rowCount = 0
        for (chunk, result) in results.enumerated() where !result.isEmpty {
            let version = try result.columnIndex(RowVersion.column, decoding: Int64.self)
            let position = count > 1 ? try result.columnIndex(TableKey.indexColumn, decoding: Int64.self) : nil
            for row in result.indices {
                var at = 0
                if let position { at = chunk * Self.batchSize + Int(try result.cell(row: row, column: position).decodeInteger(Int64.self)) - 1 }
                guard found.indices.contains(at), found[at] == nil else { continue }
                found[at] = .row(rowCount + row, version: try result.cell(row: row, column: version).decodeInteger(Int64.self))
            }
            parts.append((rowCount, ColumnLayout(result: result, naming: R.columnNaming), version))
            rowCount += result.count
        }
        reads?.withLock { $0.rows += rowCount }
        return ReadBatch(found: found, rowCount: rowCount) { index in
            guard let part = parts.lastIndex(where: { $0.first <= index }) else {
                throw PostgresError(.invalidStatement, "\(shownName): no row \(index) was read")
            }
            let (row, layout) = (index - parts[part].first, parts[part].layout)
            let record: R
            do {
                record = try R(from: RowDecoder(layout: layout, row: row))
            } catch var error as ColumnDecodingError {
                error.name(record: R.self, table: R.tableName)
                throw error
            }
            return Committed(value: record, version: try layout.result.cell(row: row, column: parts[part].version).decodeInteger(Int64.self))
        }
    }
}
