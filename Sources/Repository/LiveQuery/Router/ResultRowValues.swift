/// A row as the conditions evaluated in this process see it: the value of a column by name
/// (nil for NULL), and the columns whose values could not be read — a query whose condition
/// reads one of those cannot be decided here, and runs whole instead.
@usableFromInline
package protocol ConditionRow {
    /// The value of `column`: nil for NULL, and for a column that could not be read (which
    /// `unreadable` then lists).
    mutating func value(of column: String) -> ConditionValue?
    /// The columns asked for that could not be read.
    var unreadable: Set<String> { get }
}

/// One row of a read's result as a ``ConditionRow``: a column's cell is read when a condition
/// asks for it, as the kind its type is compared as here.
@usableFromInline
package struct ResultRowValues: ConditionRow {
    private let result: QueryResult
    private let row: Int
    private let positions: [String: Int]
    private let columns: [String: CompiledCondition.Column]
    @usableFromInline package private(set) var unreadable: Set<String> = []

    /// Row `row` of `result`, whose columns are at `positions`; `columns` says how each of the
    /// table's columns is compared here.
    @usableFromInline package init(_ result: QueryResult, row: Int, positions: [String: Int], columns: [String: CompiledCondition.Column]) {
        (self.result, self.row, self.positions, self.columns) = (result, row, positions, columns)
    }

    @usableFromInline package mutating func value(of column: String) -> ConditionValue? {
        guard let position = positions[column] else {
            unreadable.insert(column)
            return nil
        }
        let cell = result.cell(row: row, column: position)
        // A type not compared here: a condition can only ask whether it is NULL.
        guard let kind = columns[column]?.kind else { return cell.bytes == nil ? nil : .opaque }
        guard let value = ConditionValue.from(cell, as: kind) else {
            unreadable.insert(column)
            return nil
        }
        return value
    }
}
