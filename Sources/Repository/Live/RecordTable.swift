/// The SQL a live repository runs for one record type.
@usableFromInline
struct RecordTable<R: Record>: Sendable {
    @usableFromInline let database: Database
    /// Counts queries and rows read, for monitoring and benchmarks.
    @usableFromInline let reads: Locked<ReadCount>?
    /// The schema-qualified name, as change announcements spell it (`public.people`; the
    /// schema and the name are the catalog's, and either may hold dots).
    @usableFromInline let qualifiedName: String
    /// The table as messages name it: each part quoted where it needs to be, control
    /// characters escaped (`public."odd.name"`).
    @usableFromInline let shownName: String
    /// The name for SQL text: schema and table quoted one by one.
    let quoted: String
    /// The table's primary key.
    @usableFromInline let key: TableKey
    /// The statements that read one row, and many, by key (built once: a read is hot).
    private let selectOne: String
    private let selectMany: String
    /// The statement that reads rows by key with their keys' positions (see ``readBatch(_:)``).
    let selectIndexed: String
    /// A column a write may set to itself to give the row a new version without changing it:
    /// the first that this role may update and that is neither generated nor an identity
    /// column only DEFAULT may be assigned to, key columns last (nil when there is none).
    let touchColumn: String?
    /// Where the server may store something other than what a write sends (see ``StoredRewrites``).
    let rewrites: StoredRewrites
    /// The `UPDATE` statements of writes, built once per set of columns.
    let updates = UpdateStatements()
    /// The columns a read returns (before the version), when rows from the replication stream
    /// may stand for reads: a streamed row of other columns (PostgreSQL 15 leaves generated
    /// columns out; the table may have been altered since) is read instead. nil under row-level
    /// security, which the stream does not apply: every row is read.
    @usableFromInline let streamColumns: [String]?
    /// Columns of `json`, `jsonb` and arrays of them, with their type (see ``parameter(_:for:emptyArray:)``).
    let jsonColumns: [String: String]

    init(database: Database, reads: Locked<ReadCount>?, schema: String, name: String, key: TableKey, touchColumn: String?,
         rewrites: StoredRewrites = StoredRewrites(), streamColumns: [String]? = nil, jsonColumns: [String: String] = [:]) {
        self.jsonColumns = jsonColumns
        self.database = database
        self.reads = reads
        self.key = key
        self.touchColumn = touchColumn
        self.rewrites = rewrites
        self.streamColumns = streamColumns
        qualifiedName = schema + "." + name
        shownName = SQLIdentifier.shown(schema: schema, name: name)
        quoted = SQLIdentifier.quoted(schema) + "." + SQLIdentifier.quoted(name)
        selectOne = "SELECT \(RowVersion.rowAndVersion) FROM \(quoted) WHERE \(key.equals(parameter: 1))"
        selectMany = "SELECT \(RowVersion.rowAndVersion) FROM \(quoted) WHERE \(key.isAny(parameter: 1))"
        selectIndexed = "SELECT t.*, t.xmin AS \"\(RowVersion.column)\", k.\"\(TableKey.indexColumn)\" FROM \(key.indexedJoin(quoted, parameter: 1))"
    }

    /// Resolves `R.tableName` (`people`, `crm.people`, `"odd.name"`) through the server's search
    /// path, and its primary key.
    static func resolve(_ database: Database, reads: Locked<ReadCount>? = nil) async throws -> RecordTable {
        let row = try await PostgresError.namingTable(R.tableName, as: "\(R.self).tableName") { try await database.query("""
            SELECT n.nspname, c.relname, c.oid::int8, (SELECT a.attname FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0
                AND NOT a.attisdropped AND a.attgenerated = '' AND a.attidentity <> 'a'
                AND has_column_privilege(c.oid, a.attnum, 'UPDATE')
                ORDER BY a.attnum = ANY(coalesce((SELECT i.indkey::int2[] FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary), '{}')), a.attnum LIMIT 1),
            \(StoredRewrites.columns), \(StoredRewrites.wholeRow),
            CASE WHEN NOT c.relrowsecurity THEN ARRAY(SELECT a.attname::text FROM pg_attribute a
                WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum) END,
            \(Self.jsonColumnsQuery)
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = $1::regclass
            """, [R.tableName]) }[0]
        let (schema, name) = (try row.decode(String.self, at: 0), try row.decode(String.self, at: 1))
        let key = try await TableKey.resolve(try row.decode(Int64.self, at: 2), table: schema + "." + name, declared: R.primaryKey,
                                             naming: R.columnNaming) { try await database.query($0, $1) }
        // A scalar id cannot name a row of a key of several columns: refused now, not at the
        // first change (a table with no rows would show none, for good, and say nothing).
        if key.columns.count > 1, R.ID.self is any SQLValueConvertible.Type {
            throw PostgresError(.invalidStatement, "the key of \(TerminalText.name(schema + "." + name)) is \(key.columns.map { TerminalText.name($0) }.joined(separator: ", ")), "
                + "but \(R.self).ID is \(R.ID.self), one value: make the id a struct of those columns, in key order")
        }
        RecordKeyColumns.record(key.columns, for: R.self)
        let json = jsonColumns(try row.decode([String].self, at: 7))
        RecordJSONBColumns.record(Set(json.filter { $0.value == "jsonb" || $0.value == "jsonb[]" }.keys), for: R.self)
        let rewrites = StoredRewrites(columns: Set(try row.decode([String].self, at: 4)), wholeRow: try row.decode(Bool.self, at: 5))
        return RecordTable(database: database, reads: reads, schema: schema, name: name, key: key,
                           touchColumn: try row.decode(String?.self, at: 3), rewrites: rewrites, streamColumns: try row.decode([String]?.self, at: 6),
                           jsonColumns: json)
    }

    /// The rows with these keys and their versions, at most 1,000 keys per query.
    @inlinable func fetch(_ ids: [R.ID]) async throws -> [(record: R, version: Int64)] {
        var rows: [(R, Int64)] = []
        for (sql, parameters) in try selects(ids) {
            rows += try Self.decode(await database.query(sql, parameters))
        }
        reads?.withLock { $0.rows += rows.count }
        return rows
    }

    /// The same, through `query` (the change feed's connection, on its own thread).
    func fetch(_ ids: [R.ID], using query: (String, [SQLValue]) throws -> QueryResult) throws -> [(record: R, version: Int64)] {
        let rows = try selects(ids).flatMap { sql, parameters in try Self.decode(query(sql, parameters)) }
        reads?.withLock { $0.rows += rows.count }
        return rows
    }

    /// A read by `id` the server refused because `id` is not a value of the key's type (SQLSTATE
    /// 22P02, `"same"` for a `bigint` key): the record's `id` is not its row's key, said so in one
    /// line; nil for any other failure.
    @usableFromInline func idNotOfKey(_ error: PostgresError, id: some Encodable) -> PostgresError? {
        guard error.sqlState == "22P02" else { return nil }
        let columns = key.columns.map { TerminalText.name($0) }.joined(separator: ", ")
        return PostgresError(.invalidParameter, "\(shownName): the id \(LiveRepository.keyText(id).debugDescription) is not a value of the key (\(columns)): "
                             + "a Record's id must be its row's primary key, not another column — \(error.message)")
    }

    /// One statement per 1,000 keys; a single key uses `k = $1`, which plans better than ANY.
    @usableFromInline func selects(_ ids: [R.ID]) throws -> [(String, [SQLValue])] {
        try stride(from: 0, to: ids.count, by: 1000).map { start in
            reads?.withLock { $0.queries += 1 }
            if ids.count == 1 { return (selectOne, try key.values(of: ids[0])) }
            return (selectMany, try key.arrays(of: Array(ids[start..<min(start + 1000, ids.count)])))
        }
    }

    /// Every row as a record and its version; the columns are looked up once for all rows.
    /// A column that does not decode names the record type and its table.
    @usableFromInline static func decode(_ result: QueryResult) throws -> [(record: R, version: Int64)] {
        guard !result.isEmpty else { return [] }
        let version = try result.columnIndex(RowVersion.column, decoding: Int64.self)
        let records: [R]
        do {
            records = try result.decode(R.self, columns: R.columnNaming)
        } catch var error as ColumnDecodingError {
            error.name(record: R.self, table: R.tableName)
            throw error
        }
        var rows: [(record: R, version: Int64)] = []
        rows.reserveCapacity(records.count)
        for (index, record) in records.enumerated() {
            rows.append((record, try result.cell(row: index, column: version).decodeInteger(Int64.self)))
        }
        return rows
    }
}

extension RecordTable: LiveTable {
    @usableFromInline static var holdsAggregates: Bool { false }

    @inlinable func read(_ ids: [R.ID]) async throws -> [(id: R.ID, committed: Committed<RecordContent<R>>)] {
        try await fetch(ids).map { ($0.record.id, Committed(value: $0.record, version: $0.version)) }
    }

    @usableFromInline func read(_ ids: [R.ID], using query: FeedQuery) throws -> [(id: R.ID, committed: Committed<RecordContent<R>>)] {
        try fetch(ids, using: query).map { ($0.record.id, Committed(value: $0.record, version: $0.version)) }
    }

    /// The records in rows from the replication stream, decoded together as one read's rows:
    /// nil for a row of other columns than a read returns (see ``streamColumns``), or one that
    /// does not decode (it is read instead, and a row that does not fit is reported as reads
    /// report it).
    @usableFromInline func committed(streamed rows: [StreamedRow]) -> [Committed<RecordContent<R>>?] {
        var decoded: [Committed<RecordContent<R>>?] = []
        decoded.reserveCapacity(rows.count)
        var start = rows.startIndex
        while start < rows.endIndex {
            // A run of rows of the same columns (the table may be altered between two of them).
            let end = rows[start...].firstIndex { $0.columns != rows[start].columns } ?? rows.endIndex
            let run = rows[start..<end]
            if run[start].columns.map(\.name) != streamColumns {
                decoded += run.map { _ in nil }
            } else if let records = try? Self.decode(StreamedRow.result(run)) {
                decoded += records.map { Committed(value: $0.record, version: $0.version) }
            } else {
                decoded += run.map { row in (try? Self.decode(row.result).first).map { Committed(value: $0.record, version: $0.version) } }
            }
            start = end
        }
        return decoded
    }
}

/// Queries a repository ran to read rows, and the rows they returned.
@usableFromInline struct ReadCount: Sendable {
    var queries = 0
    @usableFromInline var rows = 0
    /// Rows taken from the replication stream instead.
    var streamed = 0
}
