import Foundation
public import IdentifiedCollections

extension LiveRepository {
    /// The live result of any read-only query — joins, aggregates, `GROUP BY`, subqueries —
    /// decoded into `Row`s (columns to properties, snake_case by default): run again whenever
    /// a table it reads is announced, a burst of changes costing at most two runs, and
    /// published only when the result differs. After the change feed reconnects it runs again.
    ///
    /// ```swift
    /// struct Tally: Decodable, Equatable, Sendable { var name: String; var addresses: Int }
    /// let tallies = try await repository.readAll(Tally.self, sql: """
    ///     SELECT p.name, count(a.id)::int AS addresses FROM people p
    ///     LEFT JOIN addresses a ON a.person_id = p.id GROUP BY p.id ORDER BY p.name
    ///     """)
    /// let subscription = tallies.observe { print($0.new) }
    /// ```
    ///
    /// The tables are found in the query's plan (`EXPLAIN (FORMAT JSON, VERBOSE)`: views are
    /// seen through, partitions count as their partitioned table); name others in `tables` —
    /// one read only inside a function is not in the plan. Every table followed must be enabled
    /// (``LiveSchema/enable(_:on:)``). The result lives as long as it, or an observation of it,
    /// is held. Its first run is in a read-only transaction, so a write the plan does not show
    /// (`SELECT … INTO`, `nextval`) is refused; it runs again on every change, so it should not
    /// have the side effects such a transaction allows either (an advisory lock).
    ///
    /// Columns map to properties by `columns`: with ``ColumnNaming/exact``, explicit
    /// `CodingKeys` (`case userID = "userID"`) name the columns as they are.
    /// - Throws: ``PostgresError`` for a statement that is not one read-only query, that reads a
    ///   table whose changes are not announced, that reads no announced table at all (only
    ///   system catalogs, or none), or that the server refuses.
    public func readAll<Row: Decodable & Equatable & Sendable>(
        _ type: Row.Type = Row.self, sql: String, parameters: [any SQLValueConvertible] = [], tables: [String] = [],
        columns naming: ColumnNaming = .snakeCase
    ) async throws -> Derived<[Row]> {
        try await liveSelect(sql: sql, parameters: parameters, tables: tables) { try $0.decode(Row.self, columns: naming) }
    }

    /// The same, for `Identifiable` rows: the result is an `IdentifiedArray`, so that an
    /// update's `changes()` names the ids inserted, removed and updated.
    /// - Throws: also when two rows of a result share an id.
    public func readAll<Row: Decodable & Equatable & Sendable & Identifiable>(
        _ type: Row.Type = Row.self, sql: String, parameters: [any SQLValueConvertible] = [], tables: [String] = [],
        columns naming: ColumnNaming = .snakeCase
    ) async throws -> Derived<IdentifiedArrayOf<Row>> where Row.ID: Sendable {
        try await liveSelect(sql: sql, parameters: parameters, tables: tables) { result in
            var rows = IdentifiedArrayOf<Row>()
            for row in try result.decode(Row.self, columns: naming) {
                guard rows.append(row).inserted else {
                    throw PostgresError(.invalidStatement, "two rows of the live query's result have the id \(row.id): ids must be unique")
                }
            }
            return rows
        }
    }

    private func liveSelect<Value: Equatable & Sendable>(
        sql: String, parameters: [any SQLValueConvertible], tables: [String], decode: @escaping @Sendable (QueryResult) throws -> Value
    ) async throws -> Derived<Value> {
        try await waitUntilListening()
        let values = parameters.map(\.sqlValue)
        let followed = try await tablesFollowed(by: sql, values, naming: tables)
        let number = await sequence.nextRead()
        let initial = try decode(await firstRun(sql, values))
        let select = LiveSelect(tables: followed, initial: initial, owner: self, report: report) { [database, reads, sequence] in
            // Run again on a change: once the change is visible to it (see ``ReadSequence/holdReads()``).
            await sequence.readsMayStart()
            let result = try await database.query(sql, values)
            reads.withLock { $0.queries += 1; $0.rows += result.count }
            return try decode(result)
        }
        queries.withLock { $0.add(select) }
        // A change announced while the first run ran may not be in its result.
        if identity.withLock({ map in followed.contains { map.announcements.mayHaveChanged(table: $0.name, since: number) } }) { select.rerun() }
        return select.result()
    }

    /// The query's first run, in a read-only transaction: a statement that writes where its
    /// plan cannot show it (`SELECT … INTO`, a function that writes, `nextval`) is refused
    /// before it changes anything.
    private func firstRun(_ sql: String, _ values: [SQLValue]) async throws -> QueryResult {
        do {
            return try await database.transaction { connection in
                _ = try await connection.query("SET TRANSACTION READ ONLY", values: [])
                return try await connection.query(sql, values: values)
            }
        } catch let error as PostgresError where error.sqlState == "25006" {  // read_only_sql_transaction
            throw PostgresError(.invalidStatement, "a live query must only read: this one writes — \(error.message) "
                                + "(\(TerminalText.escaped(sql, limit: 200)))")
        }
    }

    /// The tables `sql` reads, from its plan, and those `named`, as announcements name them
    /// and as messages show them;
    /// throws when one is not announced.
    private func tablesFollowed(by sql: String, _ parameters: [SQLValue], naming named: [String]) async throws -> [(name: String, shown: String)] {
        let plan = try await database.query("EXPLAIN (FORMAT JSON, VERBOSE) " + sql, parameters)[0].decode(String.self, at: 0)
        let nodes = try PlanNodes(json: plan)
        guard !nodes.modifies else {
            throw PostgresError(.invalidStatement, "a live query must only read: this one writes (\(TerminalText.escaped(sql, limit: 200)))")
        }
        // Each run would take row locks (and wait for other transactions' writers) to no end.
        guard !nodes.locksRows else {
            throw PostgresError(.invalidStatement, "a live query must only read: this one locks rows, FOR UPDATE or FOR SHARE (\(TerminalText.escaped(sql, limit: 200)))")
        }
        // The system catalogs announce nothing: a query may join them, but not follow them alone.
        let (catalogs, tables) = nodes.relations.reduce(into: ([String](), [String]())) { found, relation in
            let name = SQLIdentifier.quoted(relation.schema) + "." + SQLIdentifier.quoted(relation.name)
            if ["pg_catalog", "information_schema"].contains(relation.schema) { found.0.append(name) } else { found.1.append(name) }
        }
        let relations = tables + named
        guard !relations.isEmpty else {
            let read = catalogs.isEmpty ? "no table" : "only system catalogs (\(Set(catalogs).sorted().joined(separator: ", "))), whose changes are never announced"
            throw PostgresError(.invalidStatement, "a live query must read a table whose changes are announced, or it never changes: this one reads \(read) "
                                + "— name the tables a function reads in tables: (\(TerminalText.escaped(sql, limit: 200)))")
        }
        let checked = try await FollowedTables.check(relations, source: feed.source, on: database)
        let silent = checked.filter { $0.gap != nil }
        guard silent.isEmpty else {
            throw PostgresError(.invalidStatement, "a live query reads " + FollowedTables.remedy(silent, source: feed.source))
        }
        for relation in relations { watchFollowed(relation) }
        return checked.map { ($0.name, $0.shown) }
    }
}

/// What a query plan (`EXPLAIN (FORMAT JSON, VERBOSE)`) says a statement touches.
struct PlanNodes {
    /// The relations its scans read.
    private(set) var relations: [(schema: String, name: String)] = []
    /// Whether it writes (a `ModifyTable` node, also inside a CTE).
    private(set) var modifies = false
    /// Whether it locks the rows it reads (a `LockRows` node: `FOR UPDATE`, `FOR SHARE`…).
    private(set) var locksRows = false

    init(json: String) throws {
        visit(try JSONSerialization.jsonObject(with: Data(json.utf8)))
    }

    private mutating func visit(_ node: Any) {
        if let list = node as? [Any] {
            for element in list { visit(element) }
        } else if let object = node as? [String: Any] {
            if let name = object["Relation Name"] as? String { relations.append((object["Schema"] as? String ?? "public", name)) }
            if object["Node Type"] as? String == "ModifyTable" { modifies = true }
            if object["Node Type"] as? String == "LockRows" { locksRows = true }
            for value in object.values { visit(value) }
        }
    }
}
