/// The SQL a live repository runs for one aggregate type: reading roots with their children,
/// and writing an aggregate's changes in one transaction.
struct AggregateTable<A: Aggregate>: Sendable {
    let root: RecordTable<A.Root>
    let child: RecordTable<A.Child>

    @usableFromInline var qualifiedName: String { root.qualifiedName }
    /// The root table as messages name it (``RecordTable/shownName``).
    @usableFromInline var shownName: String { root.shownName }
    private var parent: String { SQLIdentifier.quoted(A.parentColumn) }
    private var position: String { SQLIdentifier.quoted(A.positionColumn) }

    /// Thrown inside the write transaction when a row is no longer at the version the edit
    /// was based on; the transaction rolls back.
    struct VersionConflict: Error {}

    /// The aggregates rooted at these ids (missing roots left out), roots and children from one
    /// snapshot: read by two statements apart, a transaction committing between them showed a
    /// root from before it with children from after it (a stranger's run saw such people).
    func fetch(_ ids: [A.ID]) async throws -> [Committed<AggregateContent<A>>] {
        try await root.database.transactionPreparingAnew { connection in
            try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            return try await fetch(ids) { sql, parameters in try await connection.query(sql, values: parameters) }
        }
    }

    /// The same, through `query` (the change feed's connection, on its own thread): in its own
    /// transaction, run again while a statement prepared before a schema change fails it (each
    /// failure forgets that statement: the roots', then the children's, so this ends).
    func fetch(_ ids: [A.ID], using query: FeedQuery) throws -> [Committed<AggregateContent<A>>] {
        var attempts = 0
        while true {
            do {
                return try fetchInTransaction(ids, using: query)
            } catch let error as PostgresError where PreparedStatements.isStale(error) && attempts < 4 {
                attempts += 1
            }
        }
    }

    private func fetchInTransaction(_ ids: [A.ID], using query: FeedQuery) throws -> [Committed<AggregateContent<A>>] {
        _ = try query("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY", [])
        do {
            let roots = try root.fetch(ids, using: query)
            var fetched: [Committed<AggregateContent<A>>] = []
            if !roots.isEmpty {
                let (sql, parameters) = childrenSelect(roots.map(\.record.id))
                fetched = try assemble(roots, try query(sql, parameters))
            }
            _ = try query("COMMIT", [])
            return fetched
        } catch {
            _ = try? query("ROLLBACK", [])
            throw error
        }
    }

    /// The aggregates, each statement run by `query` (in one snapshot).
    private func fetch(_ ids: [A.ID], query: (String, [SQLValue]) async throws -> QueryResult) async throws -> [Committed<AggregateContent<A>>] {
        var roots: [(record: A.Root, version: Int64)] = []
        for (sql, parameters) in try root.selects(ids) {
            roots += try RecordTable<A.Root>.decode(await query(sql, parameters))
        }
        root.reads?.withLock { $0.rows += roots.count }
        guard !roots.isEmpty else { return [] }
        let (sql, parameters) = childrenSelect(roots.map(\.record.id))
        return try assemble(roots, try await query(sql, parameters))
    }

    /// The roots owning these child rows, for children announced before anyone here knew them.
    func parents(of children: [A.Child.ID], using query: FeedQuery) throws -> [A.ID] {
        try query("SELECT DISTINCT \(parent) FROM \(child.quoted) WHERE \(child.key.isAny(parameter: 1))", try child.key.arrays(of: children))
            .map { try $0.decode(A.ID.self, at: 0) }
    }

    private func childrenSelect(_ ids: [A.ID]) -> (String, [SQLValue]) {
        child.reads?.withLock { $0.queries += 1 }
        return ("SELECT \(RowVersion.rowAndVersion) FROM \(child.quoted) WHERE \(parent) = ANY($1) ORDER BY \(parent), \(position)", [ids.sqlValue])
    }

    private func assemble(_ roots: [(record: A.Root, version: Int64)], _ rows: QueryResult) throws -> [Committed<AggregateContent<A>>] {
        child.reads?.withLock { $0.rows += rows.count }
        var children: [A.ID: [(child: A.Child, version: Int64)]] = [:]
        if !rows.isEmpty {
            let parent = try rows.columnIndex(A.parentColumn, decoding: A.ID.self)
            for (child, row) in zip(try RecordTable<A.Child>.decode(rows), rows) {
                children[try row.decode(A.ID.self, at: parent), default: []].append((child.record, child.version))
            }
        }
        return roots.map { root in
            let mine = children[root.record.id] ?? []
            return Committed(
                value: A(root: root.record, children: mine.map(\.child)),
                version: AggregateVersion(root: root.version, children: Dictionary(mine.map { ($0.child.id, $0.version) }, uniquingKeysWith: { first, _ in first })))
        }
    }

    /// Writes `changes` (from `base` to `edited`) on `connection`, which must be in a transaction.
    /// Every row written is decoded before the transaction commits: one the aggregate's types
    /// cannot hold (a trigger, a padded `char(n)`) throws, and the write rolls back.
    /// - Throws: ``VersionConflict`` when the root or an edited child moved on.
    func write(_ changes: AggregateChanges<A>, of edited: A, base: Committed<AggregateContent<A>>, on connection: Connection) async throws {
        if !changes.rootProperties.isEmpty || changes.isStructural {
            // A structural change writes the root row too (a new xmin), so concurrent structural edits conflict.
            let (sql, parameters) = try root.updateStatement(edited.root, base: base.value.root, id: base.value.root.id, properties: changes.rootProperties, expectedVersion: base.version.root)
            guard try RecordTable<A.Root>.decode(await connection.query(sql, values: parameters)).count == 1 else { throw VersionConflict() }
        }
        let baseChildren = changes.updated.isEmpty ? [:] : Dictionary(base.value.children.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for (edited, properties) in changes.updated {
            let (sql, parameters) = try child.updateStatement(edited, base: baseChildren[edited.id], id: edited.id, properties: properties, expectedVersion: base.version.children[edited.id] ?? 0)
            guard try RecordTable<A.Child>.decode(await connection.query(sql, values: parameters)).count == 1 else { throw VersionConflict() }
        }
        let parentID = edited.id.sqlValue
        if !changes.removed.isEmpty {
            let keys = try child.key.arrays(of: changes.removed)
            try await connection.query("DELETE FROM \(child.quoted) WHERE \(child.key.isAny(parameter: 2)) AND \(parent) = $1", values: [parentID] + keys)
        }
        if changes.isStructural {
            // Every child at its index in the edited list, where the database holds another: not
            // only those that moved in the list. Children another process deleted or inserted leave
            // gaps and ties in the positions, which an append or a move would otherwise write
            // beside, and an order the rows do not keep. (The new children are inserted below.)
            let (keys, matches) = child.key.indexedKeys(parameter: 2)
            let index = "k.\"\(TableKey.indexColumn)\" - 1"
            try await connection.query("UPDATE \(child.quoted) AS t SET \(position) = \(index) FROM \(keys) WHERE \(matches) AND t.\(parent) = $1 "
                                       + "AND t.\(position) IS DISTINCT FROM \(index)",
                                       values: [parentID] + child.key.arrays(of: edited.children.map(\.id)))
        }
        for (new, index) in changes.inserted {
            let encoded = try RecordColumns(new)
            // A child may hold the parent's key or its position itself (a key of both the parent's
            // and its own column needs it): where the child is in the aggregate decides both.
            let columns = encoded.values.filter { $0.column != A.parentColumn && $0.column != A.positionColumn }
            let names = columns.map { SQLIdentifier.quoted($0.column) } + [parent, position]
            let placeholders = (1...names.count).map { number in
                guard number <= columns.count else { return "$\(number)" }
                let column = columns[number - 1].column
                return child.parameter(number, for: column, emptyArray: encoded.emptyArrays.contains(column))
            }.joined(separator: ", ")
            _ = try RecordTable<A.Child>.decode(await connection.query(
                "INSERT INTO \(child.quoted) (\(names.joined(separator: ", "))) VALUES (\(placeholders)) RETURNING \(RowVersion.rowAndVersion)",
                values: columns.map(\.value) + [parentID, .text(String(index))]))
        }
    }
}

extension AggregateTable: LiveTable {
    static var holdsAggregates: Bool { true }

    func read(_ ids: [A.ID]) async throws -> [(id: A.ID, committed: Committed<AggregateContent<A>>)] {
        try await fetch(ids).map { ($0.value.id, $0) }
    }

    func read(_ ids: [A.ID], using query: FeedQuery) throws -> [(id: A.ID, committed: Committed<AggregateContent<A>>)] {
        try fetch(ids, using: query).map { ($0.value.id, $0) }
    }

    /// An aggregate is made of several rows: a change of one is read with the rest.
    func committed(streamed rows: [StreamedRow]) -> [Committed<AggregateContent<A>>?] { rows.map { _ in nil } }

    /// The written fields applied to the base, written row by row in one transaction.
    @usableFromInline func write(_ write: SyncState<AggregateContent<A>>.Write, id: A.ID) async throws -> WriteOutcome<AggregateContent<A>> {
        let edited = try AggregateContent<A>.replacing(write.fields, in: write.base.value, from: write.snapshot)
        let changes = try AggregateChanges(from: write.base.value, to: edited)
        guard !changes.isEmpty else { return .unchanged }
        do {
            try await root.database.transactionPreparingAnew { connection in
                try await self.write(changes, of: edited, base: write.base, on: connection)
            }
        } catch is VersionConflict {
            return .conflict
        }
        return .committed
    }
}
