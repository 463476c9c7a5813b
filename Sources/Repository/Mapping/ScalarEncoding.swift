import Foundation

/// Turns one property value into a statement parameter.
enum ScalarEncoding {
    /// The value's own SQL form when it has one, else the single scalar its `Encodable`
    /// conformance produces (a `RawRepresentable` enum, a wrapper), else its JSON.
    static func sqlValue(for value: some Encodable) throws -> SQLValue {
        if let convertible = value as? any SQLValueConvertible { return convertible.sqlValue }
        let probe = Probe()
        do {
            try value.encode(to: probe)
            if let scalar = probe.scalar { return scalar }
        } catch is NotAScalar {}
        return try .json(value)
    }

    struct NotAScalar: Error {}

    /// An encoder that accepts exactly one scalar and refuses containers.
    private final class Probe: Encoder, SingleValueEncodingContainer {
        var scalar: SQLValue?
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy _: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(Unsupported<Key>(reason: nil))
        }
        func unkeyedContainer() -> any UnkeyedEncodingContainer { Unsupported<AnyKey>(reason: nil) }
        func singleValueContainer() -> any SingleValueEncodingContainer { self }

        func encodeNil() throws { scalar = .null }
        func encode<T: Encodable>(_ value: T) throws {
            guard let convertible = value as? any SQLValueConvertible else { throw NotAScalar() }
            scalar = convertible.sqlValue
        }
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

    private struct Failing: Encoder {
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
