import Foundation

/// Encodes a struct into the column/value pairs of a row.
///
/// Scalars (numbers, strings, `Bool`, `Date`, `UUID`, `Data`, `Decimal`, enums over them) become
/// parameters of their own type; arrays of scalars become PostgreSQL arrays; nested structs,
/// dictionaries and arrays of structs become `jsonb`. `nil` is written as NULL, never skipped.
public struct RowEncoder: Sendable {
    /// How property names become column names.
    public var naming: ColumnNaming

    /// An encoder that names columns with `naming`.
    public init(naming: ColumnNaming = .snakeCase) {
        self.naming = naming
    }

    /// The columns and values of `value`, in property order.
    public func encode(_ value: some Encodable) throws -> [(column: String, value: SQLValue)] {
        try encodeNotingEmptyArrays(value).columns
    }

    /// The same, and the columns holding an empty array of elements that are not known to be
    /// scalars (a struct's): sent as the array literal `{}`, which a `json`/`jsonb` column
    /// would take as an empty object (see ``RecordTable/parameter(_:for:emptyArray:)``).
    func encodeNotingEmptyArrays(_ value: some Encodable) throws -> (columns: [(column: String, value: SQLValue)], emptyArrays: Set<String>) {
        let storage = RowStorage(naming: naming)
        try value.encode(to: RowEncoding(storage: storage))
        return (storage.columns, storage.emptyArrays)
    }
}

private final class RowStorage {
    let naming: ColumnNaming
    var columns: [(column: String, value: SQLValue)] = []
    var emptyArrays: Set<String> = []
    init(naming: ColumnNaming) {
        self.naming = naming
        columns.reserveCapacity(16)  // one allocation for most rows, rather than one per doubling
    }

    func set(_ property: String, _ value: SQLValue, isEmptyArray: Bool = false) {
        let name = naming.columnName(property)
        if isEmptyArray { emptyArrays.insert(name) } else if !emptyArrays.isEmpty { emptyArrays.remove(name) }
        // By bytes: names `String` takes as equal (Unicode normalization) are two columns.
        if let index = columns.firstIndex(where: { SQLIdentifier.sameBytes($0.column, name) }) {
            columns[index].value = value
        } else {
            columns.append((name, value))
        }
    }
}

private struct RowEncoding: Encoder {
    let storage: RowStorage
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy _: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(RowEncodingContainer<Key>(storage: storage))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        ScalarEncoding.Unsupported<ScalarEncoding.AnyKey>(reason: "a row must be a struct with named properties")
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        ScalarEncoding.Unsupported<ScalarEncoding.AnyKey>(reason: "a row must be a struct with named properties")
    }
}

private struct RowEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let storage: RowStorage
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws { storage.set(key.stringValue, .null) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        if let scalar = Self.foundationScalar(value) { return storage.set(key.stringValue, scalar) }
        let encoded = try ScalarEncoding.sqlValue(for: value)
        let isEmptyArray = encoded == .text("{}") && value is any ArrayValue && !(value is any ArrayLiteralConvertible)
        storage.set(key.stringValue, encoded, isEmptyArray: isEmptyArray)
    }

    /// Foundation's scalar types, told apart by their type alone (a comparison, where the generic
    /// path casts to protocols), encoded as that path encodes them; nil for any other type.
    static func foundationScalar<T>(_ value: T) -> SQLValue? {
        // T is the type compared with, so each cast only re-labels the value.
        if T.self == Date.self { return unsafeBitCast(value, to: Date.self).sqlValue }
        if T.self == UUID.self { return unsafeBitCast(value, to: UUID.self).sqlValue }
        if T.self == Decimal.self { return unsafeBitCast(value, to: Decimal.self).sqlValue }
        if T.self == Data.self { return unsafeBitCast(value, to: Data.self).sqlValue }
        return nil
    }

    // The scalars synthesized `Encodable` asks for by type: their values at once, with none of
    // the generic path's dynamic casts (which cost more than the rest of encoding a row).
    mutating func encode(_ value: Bool, forKey key: Key) throws { storage.set(key.stringValue, value.sqlValue) }
    mutating func encode(_ value: String, forKey key: Key) throws { storage.set(key.stringValue, value.sqlValue) }
    mutating func encode(_ value: Double, forKey key: Key) throws { storage.set(key.stringValue, value.sqlValue) }
    mutating func encode(_ value: Float, forKey key: Key) throws { storage.set(key.stringValue, value.sqlValue) }
    mutating func encode(_ value: Int, forKey key: Key) throws { storage.set(key.stringValue, value.sqlValue) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { storage.set(key.stringValue, value.sqlValue) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { storage.set(key.stringValue, value.sqlValue) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { storage.set(key.stringValue, value.sqlValue) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { storage.set(key.stringValue, value.sqlValue) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { storage.set(key.stringValue, value.sqlValue) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { storage.set(key.stringValue, value.sqlValue) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { storage.set(key.stringValue, value.sqlValue) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { storage.set(key.stringValue, value.sqlValue) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { storage.set(key.stringValue, value.sqlValue) }

    // Synthesized `Encodable` skips nil optionals via `encodeIfPresent`; a row must say NULL.
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        guard let value else { return storage.set(key.stringValue, .null) }
        try encode(value, forKey: key)
    }
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { storage.set(key.stringValue, value.sqlValue) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { storage.set(key.stringValue, value.sqlValue) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { storage.set(key.stringValue, value.sqlValue) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { storage.set(key.stringValue, value.sqlValue) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { storage.set(key.stringValue, value.sqlValue) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { storage.set(key.stringValue, value.sqlValue) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { storage.set(key.stringValue, value.sqlValue) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { storage.set(key.stringValue, value.sqlValue) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { storage.set(key.stringValue, value.sqlValue) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { storage.set(key.stringValue, value.sqlValue) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { storage.set(key.stringValue, value.sqlValue) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { storage.set(key.stringValue, value.sqlValue) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { storage.set(key.stringValue, value.sqlValue) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { storage.set(key.stringValue, value.sqlValue) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy _: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(ScalarEncoding.Unsupported<NestedKey>(reason: "use a Codable property type for nested values"))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        ScalarEncoding.Unsupported<Key>(reason: "use a Codable property type for nested values")
    }

    mutating func superEncoder() -> any Encoder { RowEncoding(storage: storage) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { RowEncoding(storage: storage) }
}
