import Foundation

/// A table's primary key as live values use it: its columns in key order, the SQL that finds
/// rows by key, and how a Swift id becomes the key's values.
///
/// An id is one column's value (`Int64`, `String`, `UUID`…) or, for a key of several columns,
/// a struct whose properties are those columns in key order (named by the record's
/// ``ColumnNaming``): `struct ID: Hashable, Codable { var projectId: Int64; var userId: String }`
/// for `PRIMARY KEY (project_id, user_id)`.
@usableFromInline
struct TableKey: Sendable {
    /// The key's columns, in the primary key's order.
    let columns: [String]
    /// Their types as SQL spells them (`bigint`, `uuid`…), for typed arrays of keys.
    let types: [String]
    /// How the record's properties name columns.
    let naming: ColumnNaming
    /// The table, for messages.
    let table: String

    /// The key columns, quoted, for a select list.
    var selectList: String { columns.map { SQLIdentifier.quoted($0) }.joined(separator: ", ") }

    /// `"k" = $n`, or `("a", "b") = ($n, $n+1)`.
    func equals(parameter first: Int) -> String {
        guard columns.count > 1 else { return "\(SQLIdentifier.quoted(columns[0])) = $\(first)" }
        return "(\(selectList)) = (\(columns.indices.map { "$\(first + $0)" }.joined(separator: ", ")))"
    }

    /// `"k" = ANY($n)`, or `("a", "b") IN (SELECT * FROM unnest($n::bigint[], $n+1::text[]))`: the
    /// rows whose keys are among ``arrays(of:)``.
    func isAny(parameter first: Int) -> String {
        guard columns.count > 1 else { return "\(SQLIdentifier.quoted(columns[0])) = ANY($\(first))" }
        let arrays = zip(columns.indices, types).map { "$\(first + $0)::\($1)[]" }.joined(separator: ", ")
        return "(\(selectList)) IN (SELECT * FROM unnest(\(arrays)))"
    }

    /// `unnest($n::bigint[], …) WITH ORDINALITY AS k(k1, …, "live.index") JOIN <table> AS t ON
    /// t."a" = k.k1 AND …`: the rows whose keys are among ``arrays(of:)`` (as `t`), each with its
    /// key's position in them, from 1 (as `"live.index"`).
    func indexedJoin(_ table: String, parameter first: Int) -> String {
        let (keys, matches) = indexedKeys(parameter: first)
        return "\(keys) JOIN \(table) AS t ON \(matches)"
    }

    /// The parts of ``indexedJoin(_:parameter:)``: `unnest(…) WITH ORDINALITY AS k(…)`, and the
    /// condition that matches a row `t` to its key in it.
    func indexedKeys(parameter first: Int) -> (keys: String, matches: String) {
        let arrays = zip(columns.indices, types).map { "$\(first + $0)::\($1)[]" }.joined(separator: ", ")
        let parts = columns.indices.map { "k\($0 + 1)" }
        let matches = zip(columns, parts).map { "t.\(SQLIdentifier.quoted($0)) = k.\($1)" }.joined(separator: " AND ")
        return ("unnest(\(arrays)) WITH ORDINALITY AS k(\(parts.joined(separator: ", ")), \"\(Self.indexColumn)\")", matches)
    }

    /// The column of ``indexedJoin(_:parameter:)`` that gives a row's key's position.
    static let indexColumn = "live.index"

    /// The parameters of ``equals(parameter:)``: the id's column values.
    func values(of id: some Encodable) throws -> [SQLValue] {
        let values = try KeyText.values(of: id, naming: naming)
        guard values.count == columns.count else {
            throw PostgresError(.invalidParameter, "the key of \(table) is \(columns.joined(separator: ", ")), but an id of type \(type(of: id)) has \(values.count) value\(values.count == 1 ? "" : "s")")
        }
        for (value, column) in zip(values, columns) where value.column.map({ $0 != column }) ?? false {
            throw PostgresError(.invalidParameter, "the key of \(table) is \(columns.joined(separator: ", ")) in that order, but \(type(of: id)) has \(value.column ?? "?") where \(column) is")
        }
        return values.map(\.value)
    }

    /// The parameters of ``isAny(parameter:)``: one array of values per key column.
    func arrays(of ids: [some Encodable]) throws -> [SQLValue] {
        // A key of one column whose ids are plain values (the usual case): no list per id —
        // and integers, the most usual, written straight, with no cast or quoting per id.
        if columns.count == 1, let integers = ids as? [Int64] { return [.text(ArrayLiteral.string(integers: integers))] }
        if columns.count == 1, let integers = ids as? [Int] { return [.text(ArrayLiteral.string(integers: integers))] }
        if columns.count == 1 {
            var values: [SQLValue] = []
            values.reserveCapacity(ids.count)
            for id in ids {
                guard let scalar = id as? any SQLValueConvertible else { return try arraysByColumn(of: ids) }
                values.append(scalar.sqlValue)
            }
            return [.text(ArrayLiteral.string(from: values))]
        }
        return try arraysByColumn(of: ids)
    }

    private func arraysByColumn(of ids: [some Encodable]) throws -> [SQLValue] {
        let rows = try ids.map { try values(of: $0) }
        return columns.indices.map { column in .text(ArrayLiteral.string(from: rows.map { $0[column] })) }
    }

    /// An announced key as an id, or nil when it cannot be one (a forged announcement).
    @inlinable func id<ID: Decodable>(from key: ChangeKey, as _: ID.Type) -> ID? {
        guard case .composite(let parts) = key else { return key.decode(as: ID.self) }
        return id(fromParts: parts, as: ID.self)
    }

    /// The key of several columns as an id struct, or nil.
    @usableFromInline func id<ID: Decodable>(fromParts parts: [ChangeKey], as _: ID.Type) -> ID? {
        guard parts.count == columns.count else { return nil }
        let byColumn = Dictionary(uniqueKeysWithValues: zip(columns, parts))
        return try? ID(from: KeyDecoder(values: byColumn, naming: naming))
    }

    /// Resolves the primary key of the table with this oid (or `declared` columns, for a table
    /// without one).
    static func resolve(_ oid: Int64, table: String, declared: [String]?, naming: ColumnNaming,
                        query: (String, [SQLValue]) async throws -> QueryResult) async throws -> TableKey {
        let primaryKey = try await query("""
            SELECT a.attname, format_type(a.atttypid, NULL) FROM pg_index i
            CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, position)
            JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
            WHERE i.indrelid = $1::oid AND i.indisprimary ORDER BY k.position
            """, [.text(String(oid))])
        var rows = primaryKey
        if let declared {
            // Changes are announced (and deleted rows streamed) by the primary key: a value
            // keyed by other columns would never be found by them.
            let actual = try primaryKey.map { try $0.decode(String.self, at: 0) }
            guard actual.isEmpty || actual == declared else {
                throw PostgresError(.invalidStatement, "the declared key (\(declared.map { TerminalText.name($0) }.joined(separator: ", "))) is not the primary key of "
                    + "\(TerminalText.name(table)) (\(actual.map { TerminalText.name($0) }.joined(separator: ", "))), by which its changes are announced: "
                    + "declare that, in that order, or none")
            }
            if actual.isEmpty {
                rows = try await query("""
                    SELECT a.attname, format_type(a.atttypid, NULL) FROM unnest($2::text[]) WITH ORDINALITY AS k(name, position)
                    JOIN pg_attribute a ON a.attrelid = $1::oid AND a.attname = k.name AND NOT a.attisdropped ORDER BY k.position
                    """, [.text(String(oid)), .text(ArrayLiteral.string(from: declared.map(SQLValue.text)))])
                guard rows.count == declared.count else {
                    throw PostgresError(.invalidStatement, "\(table) has no column named \(declared.joined(separator: " or ")) for its declared key")
                }
            }
        } else if rows.isEmpty {
            let kind = try await query("SELECT relkind::text FROM pg_class WHERE oid = $1::oid", [.text(String(oid))]).first?.decode(String.self, at: 0)
            if let kind, let error = PostgresError.notATable(table, relkind: kind) { throw error }
            throw PostgresError(.invalidStatement, "\(table) has no primary key, which live values need (changes are announced and published by it): add one, ALTER TABLE … ADD PRIMARY KEY (…)")
        }
        let key = TableKey(columns: try rows.map { try $0.decode(String.self, at: 0) }, types: try rows.map { try $0.decode(String.self, at: 1) },
                           naming: naming, table: table)
        // `char(n)` pads its values with spaces, and compares them without: an id would name a
        // row one way in Swift and another in the database and its announcements.
        if let padded = zip(key.columns, key.types).first(where: { $0.1 == "character" }) {
            throw PostgresError(.invalidStatement, "the key column \(TerminalText.name(padded.0)) of \(TerminalText.name(table)) is char(n), whose values PostgreSQL pads with spaces: "
                + "live values need a key of another type (text or varchar)")
        }
        return key
    }
}

/// How an id reads as key values, and as the text the identity map and change announcements
/// share: a single value's text, or the JSON array of the values' texts.
enum KeyText {
    /// The id's values, in its own order: one for a scalar (no column name), a struct's
    /// properties in declaration order (with the columns they name).
    static func values(of id: some Encodable, naming: ColumnNaming = .snakeCase) throws -> [(column: String?, value: SQLValue)] {
        if let scalar = id as? any SQLValueConvertible { return [(nil, scalar.sqlValue)] }
        // A struct of columns; else a single value (a wrapper, a `RawRepresentable` enum).
        guard let columns = try? RowEncoder(naming: naming).encode(id) else { return [(nil, try ScalarEncoding.sqlValue(for: id))] }
        return columns.map { ($0.column, $0.value) }
    }

    /// The id as the identity map names it.
    static func text(of id: some Encodable) -> String {
        if let scalar = id as? any SQLValueConvertible, case .text(let text) = scalar.sqlValue { return text }
        guard let values = try? values(of: id) else { return "\(id)" }
        let texts = values.map { value -> String in
            if case .text(let text) = value.value { return text }
            return "\(value.value)"
        }
        return texts.count == 1 ? texts[0] : composite(texts)
    }

    /// Several key values' texts as one: a JSON array of strings.
    static func composite(_ texts: [String]) -> String {
        String(decoding: (try? JSONEncoder().encode(texts)) ?? Data(), as: UTF8.self)
    }
}

/// Decodes an id struct from an announced composite key's values, by column.
private struct KeyDecoder: Decoder {
    let values: [String: ChangeKey]
    let naming: ColumnNaming
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy _: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Container<Key>(values: values, naming: naming))
    }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw DecodingError.typeMismatch([Any].self, .init(codingPath: [], debugDescription: "a key is a struct")) }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { throw DecodingError.typeMismatch(Any.self, .init(codingPath: [], debugDescription: "a key is a struct")) }

    struct Container<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let values: [String: ChangeKey]
        let naming: ColumnNaming
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { [] }
        func contains(_ key: Key) -> Bool { values[naming.columnName(key.stringValue)] != nil }
        func decodeNil(forKey key: Key) throws -> Bool { false }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            guard let part = values[naming.columnName(key.stringValue)], let value = part.decode(as: T.self) else {
                throw DecodingError.keyNotFound(key, .init(codingPath: [], debugDescription: "not a key column"))
            }
            return value
        }
        func nestedContainer<N: CodingKey>(keyedBy _: N.Type, forKey key: Key) throws -> KeyedDecodingContainer<N> { throw unsupported(key) }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { throw unsupported(key) }
        func superDecoder() throws -> any Decoder { throw unsupported(nil) }
        func superDecoder(forKey key: Key) throws -> any Decoder { throw unsupported(key) }
        private func unsupported(_ key: Key?) -> DecodingError {
            DecodingError.typeMismatch(Any.self, .init(codingPath: [], debugDescription: "key columns are scalars"))
        }
    }
}
