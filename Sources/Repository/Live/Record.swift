import Foundation

/// A struct stored as a row of a table with an `id` key.
///
/// Properties map to columns (snake_case by default). The live repository keeps the row's
/// version beside the value for optimistic concurrency: PostgreSQL's `xmin`, the id of the
/// transaction that last wrote the row, so the table needs no version column (and must be a
/// table, partitioned or not: a view has no `xmin`). A `version`
/// property, if declared, is read like any column and never written; neither is `id`. Install
/// `live.enable_change_notifications('table')` (see the project's migrations) so that every
/// writer announces its changes.
///
/// ```swift
/// struct Person: Record {
///     static let tableName = "people"
///     var id: Int64
///     var name: String
/// }
/// ```
public protocol Record: Codable, Identifiable, Sendable where ID: SQLValueConvertible & Codable & Hashable {
    /// The table, optionally schema-qualified, as SQL spells it: `people`, `crm.people`, or with
    /// double quotes for names with dots, spaces or capitals (`"odd.name"`, `crm."Odd Name"`).
    static var tableName: String { get }
    /// How property names become column names.
    static var columnNaming: ColumnNaming { get }
}

extension Record {
    /// snake_case columns.
    public static var columnNaming: ColumnNaming { .snakeCase }
}

/// A record's values by property, for change detection and merging.
struct RecordColumns<R: Record> {
    /// Each property's column and value, in declaration order.
    let values: [(property: String, column: String, value: SQLValue)]

    init(_ record: R) throws {
        let naming = R.columnNaming
        values = try RowEncoder(naming: .exact).encode(record).map { entry in
            (entry.column, naming.columnName(entry.column), entry.value)
        }
    }

    /// Columns a write never sets: the key, and a `version` column (which writes before
    /// migration 0005 were conditioned on).
    static var managedColumns: Set<String> { ["id", "version"] }

    /// The properties whose values differ from `other`'s.
    func changedProperties(since other: RecordColumns<R>) -> Set<String> {
        let before = Dictionary(other.values.map { ($0.property, $0.value) }, uniquingKeysWith: { first, _ in first })
        return Set(values.filter { before[$0.property] != $0.value }.map(\.property))
    }

    /// The changed properties a write may set: all but the key and the version.
    func writableChanges(since other: RecordColumns<R>) -> Set<String> {
        let managed = Set(values.filter { Self.managedColumns.contains($0.column) }.map(\.property))
        return changedProperties(since: other).subtracting(managed)
    }
}

extension RecordColumns {
    /// The properties `theirs` changed since `base` that `current` edited since `reference` —
    /// to another value than theirs, and than `reference` holds: local edits still unwritten
    /// that collide with another writer's (columns already equal to theirs are their change,
    /// arrived; columns `theirs` holds as `reference` does are the echo of our own write).
    static func collisions(current: R, theirs: R, base: R, editsSince reference: R) throws -> Set<String> {
        let (now, other, ref) = (try RecordColumns(current), try RecordColumns(theirs), try RecordColumns(reference))
        return other.writableChanges(since: try RecordColumns(base))
            .intersection(now.writableChanges(since: ref))
            .intersection(now.changedProperties(since: other))
            .intersection(other.changedProperties(since: ref))
    }
}
