extension CapturedValue {
    /// A `T` from `captured`: a value captured as a `T` is handed back as it is; integers of
    /// another width convert when they fit exactly; anything else is opened and decoded by
    /// `T`'s own `init(from:)`.
    static func decode<T: Decodable>(_ type: T.Type, from captured: CapturedValue, codingPath: [any CodingKey]) throws -> T {
        switch captured {
        case .value(let value):
            if let exact = value as? T { return exact }
            if let integer = try convertedInteger(value, to: type, codingPath: codingPath) { return integer }
            return try T(from: CapturedDecoder(captured: captured.opened(), codingPath: codingPath))
        default:
            return try T(from: CapturedDecoder(captured: captured, codingPath: codingPath))
        }
    }

    /// `value` as the integer type `T`, if both are integers; an error if it does not fit.
    private static func convertedInteger<T>(_ value: Any, to _: T.Type, codingPath: [any CodingKey]) throws -> T? {
        guard let integer = value as? any BinaryInteger, let target = T.self as? any BinaryInteger.Type else { return nil }
        guard let converted = target.init(exactly: integer) else {
            throw DecodingError.typeMismatch(T.self, .init(codingPath: codingPath, debugDescription: "\(integer) does not fit in \(T.self)"))
        }
        return converted as? T
    }

    /// Whether this is `nil`: a null, or an optional captured with no value.
    var isNil: Bool {
        switch self {
        case .null: true
        case .value(let value): (value as? any OptionalCapture)?.isNone ?? false
        case .single(let inner): inner.isNil
        default: false
        }
    }
}

/// An `Optional`, seen through an existential.
private protocol OptionalCapture {
    var isNone: Bool { get }
}

extension Optional: OptionalCapture {
    fileprivate var isNone: Bool { self == nil }
}

/// Decodes from a ``CapturedValue``.
struct CapturedDecoder: Decoder {
    let captured: CapturedValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy _: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .keyed(let values) = try seenThroughSingleValues() else { throw mismatch([String: Any].self) }
        return KeyedDecodingContainer(CapturedKeyedContainer<Key>(values: values, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .unkeyed(let values) = try seenThroughSingleValues() else { throw mismatch([Any].self) }
        return CapturedUnkeyedContainer(values: values, codingPath: codingPath)
    }

    /// The captured value, seen through single-value containers holding a value that encodes
    /// as a container: to an encoder such as JSON's, a value encoded as a single value holding
    /// an array *is* that array, and types rely on it (`IdentifiedArray` encodes its elements as
    /// one value and decodes them as an array). A few levels at most, in case a value encodes
    /// as itself.
    private func seenThroughSingleValues() throws -> CapturedValue {
        var current = captured
        for _ in 0..<8 {
            guard case .single(let inner) = current else { return current }
            current = try inner.opened()
        }
        return current
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        CapturedSingleContainer(captured: captured, codingPath: codingPath)
    }

    private func mismatch(_ type: Any.Type) -> DecodingError {
        DecodingError.typeMismatch(type, .init(codingPath: codingPath, debugDescription: "the value was not encoded as \(type)"))
    }
}

private struct CapturedKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let values: [String: CapturedValue]
    let codingPath: [any CodingKey]

    var allKeys: [Key] { values.keys.compactMap { Key(stringValue: $0) } }
    func contains(_ key: Key) -> Bool { values[key.stringValue] != nil }

    private func value(_ key: some CodingKey) throws -> CapturedValue {
        guard let value = values[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no value for \(key.stringValue)"))
        }
        return value
    }

    func decodeNil(forKey key: Key) throws -> Bool { try value(key).isNil }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try CapturedValue.decode(type, from: value(key), codingPath: codingPath + [key])
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try CapturedDecoder(captured: value(key).opened(), codingPath: codingPath + [key]).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try CapturedDecoder(captured: value(key).opened(), codingPath: codingPath + [key]).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        CapturedDecoder(captured: try value(CapturedKey.super).opened(), codingPath: codingPath + [CapturedKey.super])
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        CapturedDecoder(captured: try value(key).opened(), codingPath: codingPath + [key])
    }
}

private struct CapturedUnkeyedContainer: UnkeyedDecodingContainer {
    let values: [CapturedValue]
    let codingPath: [any CodingKey]
    var currentIndex = 0

    var count: Int? { values.count }
    var isAtEnd: Bool { currentIndex >= values.count }

    private mutating func next(_ type: Any.Type) throws -> (CapturedValue, [any CodingKey]) {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: codingPath, debugDescription: "no more elements"))
        }
        defer { currentIndex += 1 }
        return (values[currentIndex], codingPath + [CapturedKey(index: currentIndex)])
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, values[currentIndex].isNil else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (value, path) = try next(type)
        return try CapturedValue.decode(type, from: value, codingPath: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (value, path) = try next(NestedKey.self)
        return try CapturedDecoder(captured: value.opened(), codingPath: path).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (value, path) = try next([Any].self)
        return try CapturedDecoder(captured: value.opened(), codingPath: path).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let (value, path) = try next(Any.self)
        return CapturedDecoder(captured: try value.opened(), codingPath: path)
    }
}

private struct CapturedSingleContainer: SingleValueDecodingContainer {
    let captured: CapturedValue
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool { captured.isNil }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        guard case .single(let inner) = captured else {
            throw DecodingError.typeMismatch(type, .init(codingPath: codingPath, debugDescription: "the value was not encoded as a single value"))
        }
        return try CapturedValue.decode(type, from: inner, codingPath: codingPath)
    }
}
