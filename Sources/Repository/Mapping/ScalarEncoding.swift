import Foundation

/// Turns one property value into a statement parameter.
enum ScalarEncoding {
    /// The value's own SQL form when it has one, else the single scalar its `Encodable`
    /// conformance produces (a `RawRepresentable` enum, a wrapper, an optional of one), an
    /// array of such scalars as a PostgreSQL array (nested arrays as more dimensions, refused
    /// unless rectangular), else its JSON.
    static func sqlValue(for value: some Encodable) throws -> SQLValue {
        let node: ArrayLiteral.Node
        do {
            node = try Self.node(for: value, allowsArrays: value is any ArrayValue)
        } catch is NotAScalar {
            return try .json(value)
        }
        switch node {
        case .scalar(let scalar): return scalar
        case .array:
            do {
                try ArrayLiteral.checkRectangular(node)
            } catch {
                throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: error.description))
            }
            return .text(ArrayLiteral.string(node))
        }
    }

    /// `value` as a scalar or an array of them; throws ``NotAScalar`` for anything else.
    static func node(for value: some Encodable, allowsArrays: Bool) throws -> ArrayLiteral.Node {
        if allowsArrays, let array = value as? any ArrayLiteralConvertible { return array.arrayNode }
        if let convertible = value as? any SQLValueConvertible { return .scalar(convertible.sqlValue) }
        let probe = Probe(allowsArrays: allowsArrays)
        try value.encode(to: probe)
        guard let node = probe.node else { throw NotAScalar() }
        return node
    }

    struct NotAScalar: Error {}

    /// An encoder that accepts one scalar — or, where arrays are allowed, an unkeyed list of
    /// them — and refuses keyed containers.
    private final class Probe: Encoder, SingleValueEncodingContainer {
        let allowsArrays: Bool
        private var scalar: ArrayLiteral.Node?
        private var elements: Elements?
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        init(allowsArrays: Bool) { self.allowsArrays = allowsArrays }

        var node: ArrayLiteral.Node? { elements.map { .array($0.nodes) } ?? scalar }

        func container<Key: CodingKey>(keyedBy _: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(Unsupported<Key>(reason: nil))
        }
        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            guard allowsArrays else { return Unsupported<AnyKey>(reason: nil) }
            let elements = Elements()
            self.elements = elements
            return elements
        }
        func singleValueContainer() -> any SingleValueEncodingContainer { self }

        func encodeNil() throws { scalar = .scalar(.null) }
        func encode<T: Encodable>(_ value: T) throws { scalar = try ScalarEncoding.node(for: value, allowsArrays: allowsArrays) }
    }

    /// The elements of an array, each a scalar or a sub-array.
    private final class Elements: UnkeyedEncodingContainer {
        var nodes: [ArrayLiteral.Node] = []
        var codingPath: [any CodingKey] { [] }
        var count: Int { nodes.count }

        func encodeNil() throws { nodes.append(.scalar(.null)) }
        func encode<T: Encodable>(_ value: T) throws { nodes.append(try ScalarEncoding.node(for: value, allowsArrays: true)) }
        func nestedContainer<N: CodingKey>(keyedBy _: N.Type) -> KeyedEncodingContainer<N> {
            KeyedEncodingContainer(Unsupported<N>(reason: nil))
        }
        func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { Unsupported<AnyKey>(reason: nil) }
        func superEncoder() -> any Encoder { Failing(reason: nil) }
    }

    /// A container that fails on first use; `reason` nil means "not a scalar, try JSON".
    struct Unsupported<Key: CodingKey>: KeyedEncodingContainerProtocol, UnkeyedEncodingContainer, SingleValueEncodingContainer {
        let reason: String?
        var codingPath: [any CodingKey] { [] }
        var count: Int { 0 }

        private func fail() throws -> Never {
            guard let reason else { throw NotAScalar() }
            throw EncodingError.invalidValue((), .init(codingPath: [], debugDescription: reason))
        }

        mutating func encodeNil() throws { try fail() }
        mutating func encodeNil(forKey _: Key) throws { try fail() }
        mutating func encode<T: Encodable>(_: T) throws { try fail() }
        mutating func encode<T: Encodable>(_: T, forKey _: Key) throws { try fail() }
        mutating func nestedContainer<N: CodingKey>(keyedBy _: N.Type) -> KeyedEncodingContainer<N> {
            KeyedEncodingContainer(Unsupported<N>(reason: reason))
        }
        mutating func nestedContainer<N: CodingKey>(keyedBy _: N.Type, forKey _: Key) -> KeyedEncodingContainer<N> {
            KeyedEncodingContainer(Unsupported<N>(reason: reason))
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { self }
        mutating func nestedUnkeyedContainer(forKey _: Key) -> any UnkeyedEncodingContainer { self }
        mutating func superEncoder() -> any Encoder { Failing(reason: reason) }
        mutating func superEncoder(forKey _: Key) -> any Encoder { Failing(reason: reason) }
    }

    fileprivate struct Failing: Encoder {
        let reason: String?
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }
        func container<Key: CodingKey>(keyedBy _: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(Unsupported<Key>(reason: reason))
        }
        func unkeyedContainer() -> any UnkeyedEncodingContainer { Unsupported<AnyKey>(reason: reason) }
        func singleValueContainer() -> any SingleValueEncodingContainer { Unsupported<AnyKey>(reason: reason) }
    }

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int?
        init(stringValue: String) { self.stringValue = stringValue }
        init(intValue: Int) { self.stringValue = String(intValue); self.intValue = intValue }
    }
}

/// Any Swift array: a value whose unkeyed encoding may be a PostgreSQL array.
protocol ArrayValue {}
extension Array: ArrayValue {}
