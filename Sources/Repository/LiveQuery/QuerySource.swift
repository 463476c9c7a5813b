/// A live store a query can hold as one of its elements: a record's or an aggregate's.
@usableFromInline
protocol MemberStore<Element>: VarPersistence {
    associatedtype Element
    /// The value all handles onto it share.
    var value: Element { get }
    /// Observes that value for the live query `query`: later updates, but those the query's
    /// own hand-over makes (see ``QueryHandOver``).
    func subscribe(member query: ObjectIdentifier, _ handler: @escaping @Sendable (Update<Element>) -> Void) -> Subscription
    /// A local edit of the fields in which `new` differs from `old` (an element as a live
    /// query showed it, perhaps older than the store's value in other fields).
    func edit(from old: Element, to new: Element, author: Author?)
    /// Counts the edits made so far for a `save()` (see ``LiveStore/enrolSave()``).
    func enrolSave() -> Int
    /// Waits for the edits counted by `ticket` (see ``LiveStore/awaitSave(_:)``).
    func awaitSave(_ ticket: Int) async throws
}

/// How a live query reads its rows, whatever the element type.
struct QuerySource<Element: Identifiable & Equatable & Sendable>: Sendable where Element.ID: Comparable & Sendable {
    /// The schema-qualified table whose rows are the elements.
    let table: String
    /// The table as messages name it (``RecordTable/shownName``).
    let shownTable: String
    /// The table's key, to read announced keys as ids.
    let key: TableKey
    /// Reads the rows with these ids (all matching rows when nil) with the query's condition,
    /// in one numbered read: the matching ones as elements with their live stores, and a
    /// hand-over that gives every row read to its live store, to run before the list is updated.
    let read: @Sendable (_ ids: [Element.ID]?) async throws -> (QueryState<Element>.Read, handOver: @Sendable () -> Void)
}

/// A query's condition and parameters as SQL over its table.
struct QueryPredicate: Sendable {
    /// A boolean SQL expression over the table's columns, with `$1`… placeholders; nil for all rows.
    let condition: String?
    let parameters: [SQLValue]

    /// A predicate over `condition`, which must be one expression: it is trusted SQL, but it
    /// must not reach outside the parentheses it is put in (`name = $1) OR (true`).
    /// - Throws: ``PostgresError`` of kind ``PostgresError/Kind/invalidStatement`` naming the problem.
    init(condition: String?, parameters: [SQLValue]) throws {
        if let condition, let problem = SQLStatements.expressionProblem(condition) {
            throw PostgresError(.invalidStatement, "the where: condition must be one SQL expression, but it has \(problem): \(TerminalText.escaped(condition, limit: 200))")
        }
        // The statements that check membership add the ids as the next parameter: a `$n` past
        // those given would silently stand for them.
        if let condition, let tokens = ConditionLexer.tokens(condition),
           let past = tokens.lazy.compactMap({ if case .parameter(let number) = $0, number > parameters.count || number < 1 { number } else { nil } }).first {
            throw PostgresError(.invalidStatement, "the where: condition uses $\(past == .max ? "\(past)…" : "\(past)"), but \(parameters.count) parameter\(parameters.count == 1 ? " was" : "s were") given")
        }
        // A subquery reads rows of other tables (or other rows of this one), whose changes
        // would never reach the rows they decide: the list would drift without a word.
        if let condition, let tokens = ConditionLexer.tokens(condition),
           zip([nil] + tokens, tokens).contains(where: { $1 == .word("select") || ($0 == .symbol("(") && $1 == .word("table")) }) {
            throw PostgresError(.invalidStatement, "the where: condition has a subquery, whose rows a live query does not follow: use readAll(_:sql:), which follows every table its plan reads")
        }
        // A condition that ends in a line comment would swallow what follows it in a statement.
        self.condition = condition.map { $0.contains("--") ? $0 + "\n" : $0 }
        self.parameters = parameters
    }

    /// The column saying whether a row matches.
    static let matchesColumn = "live_query_matches_"

    /// The statements reading `columns` (by default the whole row and its version) of the rows
    /// with these ids, each with a column saying whether it matches (at most 1,000 ids a
    /// statement); with nil, the one statement reading every matching row.
    func selectRows(_ columns: String = RowVersion.rowAndVersion, from quotedTable: String, key: TableKey,
                    among ids: [some Encodable]?) throws -> [(String, [SQLValue])] {
        let selectList = "\(columns), \(condition.map { "(\($0)) IS TRUE" } ?? "true") AS \(Self.matchesColumn)"
        guard let ids else {
            return [("SELECT \(selectList) FROM \(quotedTable)\(condition.map { " WHERE (\($0))" } ?? "")", parameters)]
        }
        let first = parameters.count + 1
        return try stride(from: 0, to: ids.count, by: 1000).map { start in
            let chunk = Array(ids[start..<min(start + 1000, ids.count)])
            return chunk.count == 1
                ? ("SELECT \(selectList) FROM \(quotedTable) WHERE \(key.equals(parameter: first))", parameters + (try key.values(of: chunk[0])))
                : ("SELECT \(selectList) FROM \(quotedTable) WHERE \(key.isAny(parameter: first))", parameters + (try key.arrays(of: chunk)))
        }
    }
}
