/// A `Decoder` over one cell: a single value, or the elements of an array.
struct CellDecoder: Decoder {
    let cell: Cell
    /// The Swift type being decoded, for errors; an array whose element type the decoder is
    /// not told (a nested container) is named as one.
    var swiftType: Any.Type = SomeArray.self
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// An array of a type the decoder was not told: ``ColumnDecodingError`` calls it "array".
    enum SomeArray {}

    func container<Key: CodingKey>(keyedBy _: Key.Type) throws -> KeyedDecodingContainer<Key> {
        _ = try cell.nonNull(Key.self)
        throw ColumnDecodingError(
            column: cell.column, swiftType: Key.self, postgresType: cell.type,
            reason: .invalidData("a nested struct or dictionary needs a json or jsonb column"))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        ArrayCellContainer(elements: try cell.arrayElements(swiftType), codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }
}

extension CellDecoder: SingleValueDecodingContainer {
    func decodeNil() -> Bool { cell.bytes == nil || cell.holdsJSONNull }
    func decode(_: Bool.Type) throws -> Bool { try cell.decodeBool() }
    func decode(_: String.Type) throws -> String { try cell.decodeString() }
    func decode(_: Double.Type) throws -> Double { try cell.decodeDouble() }
    func decode(_: Float.Type) throws -> Float { try cell.decodeFloat() }
    func decode(_ type: Int.Type) throws -> Int { try cell.decodeInteger(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try cell.decodeInteger(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try cell.decodeInteger(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try cell.decodeInteger(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try cell.decodeInteger(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try cell.decodeInteger(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try cell.decodeInteger(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try cell.decodeInteger(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try cell.decodeInteger(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try cell.decodeInteger(type) }
    func decode<T: Decodable>(_: T.Type) throws -> T { try cell.decode(T.self) }
}

/// The elements of an array cell, decoded one by one.
struct ArrayCellContainer: UnkeyedDecodingContainer {
    let elements: [Cell]
    var codingPath: [any CodingKey]
    var currentIndex = 0

    init(elements: [Cell], codingPath: [any CodingKey]) {
        self.elements = elements
        self.codingPath = codingPath
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private mutating func next(_ type: Any.Type) throws -> Cell {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: codingPath, debugDescription: "array has no more elements"))
        }
        defer { currentIndex += 1 }
        return elements[currentIndex]
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, elements[currentIndex].bytes == nil else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_: T.Type) throws -> T {
        let cell = try next(T.self)
        // An element that is itself an array is a row of a multi-dimensional array: read as
        // text, it would flatten the array, and be written back so.
        if cell.type.isArray, Self.readsAsText(T.self) {
            throw cell.error(T.self, .invalidData("a row of a multi-dimensional array; read the column as nested arrays ([[\(Self.shownName(T.self))]])"))
        }
        return try cell.decode(T.self)
    }

    /// Whether `type` reads any cell as its text: a string or a character, optional or not.
    private static func readsAsText(_ type: Any.Type) -> Bool {
        if let optional = type as? any OptionalType.Type { return readsAsText(optional.wrapped) }
        return type is any StringProtocol.Type || type == Character.self
    }

    /// `type` as Swift code spells it: `String?`, not `Optional<String>`.
    private static func shownName(_ type: Any.Type) -> String {
        if let optional = type as? any OptionalType.Type { return shownName(optional.wrapped) + "?" }
        return "\(type)"
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy _: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try CellDecoder(cell: next(NestedKey.self)).container(keyedBy: NestedKey.self)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try CellDecoder(cell: next(CellDecoder.SomeArray.self)).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder { CellDecoder(cell: try next(Any.self)) }
}

/// An `Optional` type, seen through its metatype.
private protocol OptionalType {
    static var wrapped: Any.Type { get }
}

extension Optional: OptionalType {
    fileprivate static var wrapped: Any.Type { Wrapped.self }
}
