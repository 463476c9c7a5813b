import Foundation

/// A struct stored as a row of a table, found by the table's primary key.
///
/// Properties map to columns (snake_case by default). The key is the table's primary key,
/// whatever its columns are called: `id` (from `Identifiable`) is its value — one column's
/// (`Int64`, `String`, `UUID`…), or, for a key of several columns, a struct of them in key order:
///
/// ```swift
/// struct Person: Record {
///     static let tableName = "people"
///     var id: Int64
///     var name: String
/// }
///
/// struct Membership: Record {                      // PRIMARY KEY (project_id, user_id)
///     static let tableName = "memberships"
///     struct Key: Hashable, Codable, Sendable { var projectId: Int64; var userId: String }
///     var projectId: Int64
///     var userId: String
///     var role: String
///     var id: Key { Key(projectId: projectId, userId: userId) }
/// }
/// ```
///
/// The live repository keeps the row's version beside the value for optimistic concurrency:
/// PostgreSQL's `xmin`, the id of the transaction that last wrote the row, so the table needs
/// no version column (and must be a table, partitioned or not: a view has no `xmin`). Key
/// columns, and a `version` column if declared, are read like any column and never written: a
/// local edit of one is refused. Enable the table once —
/// `LiveSchema.enable("people", on: database)`, or `SELECT live.enable_change_notifications('people')`
/// in a migration — so that every writer announces its changes.
public protocol Record: Codable, Identifiable, Sendable where ID: Codable & Hashable & Sendable {
    /// The table, optionally schema-qualified, as SQL spells it: `people`, `crm.people`, or with
    /// double quotes for names with dots, spaces or capitals (`"odd.name"`, `crm."Odd Name"`).
    static var tableName: String { get }
    /// How property names become column names.
    static var columnNaming: ColumnNaming { get }
    /// The key columns, named yourself (nil, the default: the table's primary key). A live
    /// value's table must be enabled or published, which needs a primary key.
    static var primaryKey: [String]? { get }
}

extension Record {
    /// snake_case columns.
    public static var columnNaming: ColumnNaming { .snakeCase }
    /// The table's primary key.
    public static var primaryKey: [String]? { nil }
}

/// The key columns of each record type's table, once resolved: columns a write never sets.
enum RecordKeyColumns {
    private static let known = Locked<[ObjectIdentifier: Set<String>]>([:])

    static func record(_ columns: [String], for type: Any.Type) {
        known.withLock { $0[ObjectIdentifier(type)] = Set(columns) }
    }

    /// Before the table is resolved (values made by hand in tests): `id`.
    static func of(_ type: Any.Type) -> Set<String> {
        known.withLock { $0[ObjectIdentifier(type)] } ?? ["id"]
    }
}

/// The `jsonb` columns of each record type's table, once resolved: a JSON string holding a NUL
/// (`\u0000`, as `JSONEncoder` writes it) is refused by `jsonb` (a `json` column keeps it).
enum RecordJSONBColumns {
    private static let known = Locked<[ObjectIdentifier: Set<String>]>([:])

    static func record(_ columns: Set<String>, for type: Any.Type) {
        known.withLock { $0[ObjectIdentifier(type)] = columns }
    }

    static func of(_ type: Any.Type) -> Set<String> {
        known.withLock { $0[ObjectIdentifier(type)] } ?? []
    }

    /// Whether JSON `text` holds the escape `\u0000` (a backslash escaping a backslash is no
    /// escape of what follows it).
    static func holdsEscapedNUL(_ text: String) -> Bool {
        var bytes = text.utf8.makeIterator()
        while let byte = bytes.next() {
            guard byte == UInt8(ascii: "\\") else { continue }
            guard bytes.next() == UInt8(ascii: "u") else { continue }
            var digits: [UInt8] = []
            while digits.count < 4, let digit = bytes.next() { digits.append(digit) }
            if digits == Array("0000".utf8) { return true }
        }
        return false
    }
}

/// Each record type's column names, by property in the order it encodes them, as its
/// ``Record/columnNaming`` makes them: kept once known, so that encoding a record — several
/// times per write — converts no name again.
enum RecordColumnNames {
    /// A leaf lock: taken for a lookup or an insert only, with nothing taken inside it. It may be
    /// taken while a live store's lock is held (a transition comparing two records encodes them).
    private static let known = Locked<[ObjectIdentifier: [(property: String, column: String)]]>([:])

    /// The properties of `columns` (an encoding of an `R`) with their columns.
    static func of<R: Record>(_: R.Type, _ columns: [(column: String, value: SQLValue)]) -> [(property: String, column: String)] {
        let id = ObjectIdentifier(R.self)
        if let names = known.withLock({ $0[id] }), names.count == columns.count,
           names.indices.allSatisfy({ SQLIdentifier.sameBytes(names[$0].property, columns[$0].column) }) {
            return names
        }
        // First seen, or a type whose encoding leaves out, reorders or respells properties
        // (compared by bytes: names canonically equivalent may be two columns): named anew.
        let naming = R.columnNaming
        let names = columns.map { (property: $0.column, column: naming.columnName($0.column)) }
        known.withLock { $0[id] = names }
        return names
    }
}

/// A record's values by property, for change detection and merging.
@usableFromInline struct RecordColumns<R: Record> {
    /// Each property's column and value, in declaration order.
    let values: [(property: String, column: String, value: SQLValue)]
    /// The columns given an empty array of structs (see ``RowEncoder/encodeNotingEmptyArrays(_:)``).
    let emptyArrays: Set<String>

    @usableFromInline init(_ record: R) throws {
        let (columns, emptyArrays) = try RowEncoder(naming: .exact).encodeNotingEmptyArrays(record)
        let names = RecordColumnNames.of(R.self, columns)
        values = columns.indices.map { (names[$0].property, names[$0].column, columns[$0].value) }
        self.emptyArrays = emptyArrays.isEmpty ? [] : Set(emptyArrays.map { R.columnNaming.columnName($0) })
    }

    /// Columns a write never sets: the key's. (A column named `version` is the user's own, as
    /// any other: row versions are `xmin`.)
    static var managedColumns: Set<String> { RecordKeyColumns.of(R.self) }

    /// The properties whose values differ from `other`'s.
    @usableFromInline func changedProperties(since other: RecordColumns<R>) -> Set<String> {
        // Two encodings of one type list the same properties in the same order, but for a type
        // whose encoding leaves some out: compared by position when they do, by name otherwise.
        if values.count == other.values.count, values.indices.allSatisfy({ values[$0].property == other.values[$0].property }) {
            var changed: Set<String> = []
            for index in values.indices where values[index].value != other.values[index].value { changed.insert(values[index].property) }
            return changed
        }
        let before = Dictionary(other.values.map { ($0.property, $0.value) }, uniquingKeysWith: { first, _ in first })
        return Set(values.filter { before[$0.property] != $0.value }.map(\.property))
    }

    /// The changed properties a write may set: all but the key's. An edit of a
    /// key column is refused (a row keeps its key: insert another instead), and so is text with
    /// a NUL character, which PostgreSQL cannot store — when the edit is made, so that the
    /// write does not fail later and take the other edits written with it along.
    func writableChanges(since other: RecordColumns<R>) throws -> Set<String> {
        let changed = changedProperties(since: other)
        guard !changed.isEmpty else { return changed }
        let key = Self.managedColumns
        if let edited = values.first(where: { changed.contains($0.property) && key.contains($0.column) }) {
            throw PostgresError(.invalidParameter, "column \(TerminalText.name(edited.column)) is part of the key of \(TerminalText.escaped(R.tableName)): a live row's key cannot be edited (insert a new row instead)")
        }
        try refuseUnstorableText(among: changed)
        return changed
    }

    /// Refuses text that PostgreSQL cannot store — a NUL character, in a `jsonb` column also
    /// escaped in a JSON string — in the properties `among` names (every property when nil).
    func refuseUnstorableText(among properties: Set<String>? = nil) throws {
        let jsonb = RecordJSONBColumns.of(R.self)
        for (property, column, value) in values where properties?.contains(property) ?? true {
            guard case .text(let text) = value else { continue }
            if text.utf8.contains(0) || (jsonb.contains(column) && RecordJSONBColumns.holdsEscapedNUL(text)) {
                throw PostgresError(.invalidParameter, "\(TerminalText.name(column)) of \(TerminalText.name(R.tableName)): the text holds a NUL character, which PostgreSQL cannot store\(jsonb.contains(column) ? " in jsonb" : ""); the edit is refused")
            }
        }
    }
}
