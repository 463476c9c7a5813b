/// A `Decoder` over one row: struct properties are columns, named by a ``ColumnNaming``.
///
/// It holds one reference — the layout, which holds the result — and the row's index: a
/// decoder is copied into each container it makes, and each copy retains what it holds.
struct RowDecoder: Decoder {
    let layout: ColumnLayout
    /// The row's index in `layout.result`.
    let row: Int
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy _: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(RowContainer<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let cells = layout.result.columns.indices.map { layout.result.cell(row: row, column: $0) }
        return ArrayCellContainer(elements: cells, codingPath: [])
    }

    /// A single-column row decodes as that column's value.
    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        guard layout.result.columns.count == 1 else {
            throw ColumnDecodingError(column: "*", swiftType: Any.self, postgresType: nil,
                                      reason: .invalidData("a single value needs a one-column result, found \(layout.result.columns.count) columns"))
        }
        return CellDecoder(cell: layout.result.cell(row: row, column: 0))
    }

    func cell(for key: some CodingKey, _ swiftType: Any.Type) throws -> Cell {
        guard let column = layout.columnIndex(for: key.stringValue) else {
            throw ColumnDecodingError(column: layout.columnName(for: key.stringValue), swiftType: swiftType,
                                      postgresType: nil, reason: .missingColumn)
        }
        return layout.result.cell(row: row, column: column)
    }
}

/// Properties of the decoded struct, each read from its column.
private struct RowContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: RowDecoder
    var codingPath: [any CodingKey] { [] }

    var allKeys: [Key] {
        decoder.layout.result.columns.compactMap { Key(stringValue: $0.name) }
    }

    /// A missing column counts as absent, so optional properties may be left out of a SELECT.
    func contains(_ key: Key) -> Bool { decoder.layout.columnIndex(for: key.stringValue) != nil }

    /// SQL NULL, or JSON `null` in a `json`/`jsonb` column: an optional property reads nil.
    func decodeNil(forKey key: Key) throws -> Bool {
        let cell = try decoder.cell(for: key, Any.self)
        return cell.bytes == nil || cell.holdsJSONNull
    }

    func decode<T: Decodable>(_: T.Type, forKey key: Key) throws -> T {
        try decoder.cell(for: key, T.self).decode(T.self)
    }

    // The common column types straight from their cell: what `decode(_:forKey:)` reaches
    // through `CellDecoder`, without testing the type at run time on every cell. A json column
    // still decodes its JSON (a string is its text either way).
    func decode(_: String.Type, forKey key: Key) throws -> String { try decoder.cell(for: key, String.self).decodeString() }
    func decode(_: Bool.Type, forKey key: Key) throws -> Bool { try decode(key) { try $0.decodeBool() } }
    func decode(_: Double.Type, forKey key: Key) throws -> Double { try decode(key) { try $0.decodeDouble() } }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decode(key) { try $0.decodeInteger(type) } }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decode(key) { try $0.decodeInteger(type) } }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decode(key) { try $0.decodeInteger(type) } }

    private func decode<T: Decodable>(_ key: Key, _ direct: (Cell) throws -> T) throws -> T {
        let cell = try decoder.cell(for: key, T.self)
        return cell.type == .json || cell.type == .jsonb ? try cell.decode(T.self) : try direct(cell)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy _: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try CellDecoder(cell: decoder.cell(for: key, NestedKey.self)).container(keyedBy: NestedKey.self)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try CellDecoder(cell: decoder.cell(for: key, CellDecoder.SomeArray.self)).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { decoder }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        CellDecoder(cell: try decoder.cell(for: key, Any.self))
    }
}
