/// Where the server may store something other than what a write sends — so that the row a
/// write produces might not read back into the record's Swift types.
///
/// A value the server stores as sent reads back as what was written (the library's encodings
/// round-trip exactly), so such a write commits on its own, in one round trip, and its
/// returned row is decoded after. Where the server may change it — a column with a type
/// modifier (`char(5)` pads, `numeric(10,2)` rounds, also through a domain), a `BEFORE UPDATE`
/// row trigger, a rule, a generated column — or where the column was NULL, so its Swift type
/// has not yet read a value of its PostgreSQL type, the returned row is decoded inside the
/// write's transaction, before `COMMIT`: a row the record cannot hold rolls the write back,
/// and `save()` throws what does not fit. A `save()` that throws has never committed its write.
struct StoredRewrites: Sendable {
    /// Columns of a type with a modifier, or of a domain over one.
    var columns: Set<String> = []
    /// Whether any column may change: triggers, rules, generated columns.
    var wholeRow = false

    /// The resolve query's expression for ``columns`` (of the table `c`).
    static let columns = """
        ARRAY(SELECT a.attname::text FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid WHERE a.attrelid = c.oid
              AND a.attnum > 0 AND NOT a.attisdropped AND (a.atttypmod >= 0 OR (t.typtype = 'd' AND t.typtypmod >= 0)))
        """

    /// The resolve query's expression for ``wholeRow``: a row-level trigger that runs before
    /// UPDATE (tgtype bits ROW 1, BEFORE 2, UPDATE 16) on the table or a partition, a rule on
    /// UPDATE, or a generated column.
    static let wholeRow = """
        (EXISTS (SELECT 1 FROM pg_trigger g WHERE (g.tgrelid = c.oid OR g.tgrelid IN (SELECT relid FROM pg_partition_tree(c.oid)))
                 AND NOT g.tgisinternal AND g.tgenabled <> 'D' AND g.tgtype & 19 = 19)
         OR EXISTS (SELECT 1 FROM pg_rewrite r WHERE r.ev_class = c.oid AND r.ev_type = '2')
         OR EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attgenerated <> ''))
        """
}

extension RecordTable {
    /// One `UPDATE … SET <the written fields> WHERE <key> = $1 AND xmin = $2 RETURNING *`: on
    /// its own, pipelined with other writes, or — when the server may store something else (see
    /// ``StoredRewrites``) — in a transaction that commits only once the row it returns decodes.
    @usableFromInline func write(_ write: SyncState<RecordContent<R>>.Write, id: R.ID) async throws -> WriteOutcome<RecordContent<R>> {
        guard !write.fields.isEmpty else { return .unchanged }
        let (sql, parameters) = try updateStatement(write.snapshot, base: write.base.value, id: id, properties: write.fields, expectedVersion: write.base.version)
        if try mayStoreOtherwise(write) {
            let row = try await database.transactionPreparingAnew { connection in
                try Self.decode(await connection.query(sql, values: parameters)).first
            }
            guard let row else { return .conflict }
            return .written(Committed(value: row.record, version: row.version))
        }
        let result = try await database.pipelined(sql, parameters)
        guard !result.isEmpty else { return .conflict }
        // Committed: a row that does not decode after all is read again, and reported, by the store.
        guard let row = try? Self.decode(result).first else { return .committed }
        return .written(Committed(value: row.record, version: row.version))
    }

    /// Whether the row `write` produces could hold something its values did not say.
    private func mayStoreOtherwise(_ write: SyncState<RecordContent<R>>.Write) throws -> Bool {
        if rewrites.wholeRow { return true }
        return try RecordColumns(write.base.value).values.contains { column in
            write.fields.contains(column.property) && (column.value == .null || rewrites.columns.contains(column.column))
        }
    }
}
