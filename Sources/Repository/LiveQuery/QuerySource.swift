/// A live store a query can hold as one of its elements: a record's or an aggregate's.
protocol MemberStore<Element>: VarPersistence {
    associatedtype Element
    /// The element's value, shared with every handle onto it.
    var value: VarStore<Element> { get }
}

/// How a live query finds its rows and their live stores, whatever the element type.
struct QuerySource<Element: Identifiable & Sendable>: Sendable where Element.ID: Sendable {
    /// The schema-qualified table whose rows are the elements.
    let table: String
    /// The ids of the rows that match the query: among `ids`, or all of them when nil.
    let matchingIDs: @Sendable (_ among: [Element.ID]?) async throws -> [Element.ID]
    /// The live stores for `ids`: shared ones from the identity map, the rest read now.
    /// Rows deleted meanwhile are left out.
    let stores: @Sendable (_ ids: [Element.ID]) async throws -> [any MemberStore<Element>]
}

/// A query's condition and parameters as SQL over its table.
struct QueryPredicate: Sendable {
    /// A boolean SQL expression over the table's columns, with `$1`… placeholders; nil for all rows.
    let condition: String?
    let parameters: [SQLValue]

    /// `SELECT id FROM table WHERE condition [AND id = ANY($n)]`, with the ids as the last parameter.
    func selectIDs(from quotedTable: String, among ids: [some SQLValueConvertible]?) -> (String, [SQLValue]) {
        var clauses = condition.map { ["(\($0))"] } ?? []
        var values = parameters
        if let ids {
            values.append(ids.count == 1 ? ids[0].sqlValue : Array(ids).sqlValue)
            clauses.append(ids.count == 1 ? "id = $\(values.count)" : "id = ANY($\(values.count))")
        }
        let filter = clauses.isEmpty ? "" : " WHERE " + clauses.joined(separator: " AND ")
        return ("SELECT id FROM \(quotedTable)\(filter)", values)
    }
}
