import Foundation

/// A value as its `Encodable` conformance lays it out — keyed, unkeyed or single-value
/// containers — holding the values put into them *as those values*, not as an encoding of
/// them. Decoding from it hands each value back as it was given (see
/// ``decode(_:from:codingPath:)``), so a value rebuilt from parts of two others is exact to the
/// bit: NaN and ±infinity, a `Date`'s sub-microseconds, a `Decimal`'s 38 digits, `Int64.max`,
/// custom types. A round trip through JSON keeps none of these.
///
/// Capturing opens one level; a value inside stays whole (``value(_:)``) until ``opened()``
/// looks into it.
indirect enum CapturedValue {
    /// `nil`, as `encodeNil` puts it.
    case null
    /// A value put into a container, not opened.
    case value(any Encodable)
    /// A keyed container, by key.
    case keyed([String: CapturedValue])
    /// An unkeyed container, in order.
    case unkeyed([CapturedValue])
    /// A single-value container holding this.
    case single(CapturedValue)

    /// `value`'s containers, one level deep.
    static func capture(_ value: any Encodable) throws -> CapturedValue {
        let root = CaptureSlot()
        try value.encode(to: CaptureEncoder(slot: root, codingPath: []))
        return root.captured
    }

    /// A ``value(_:)`` opened one level; anything else as it is.
    func opened() throws -> CapturedValue {
        guard case .value(let value) = self else { return self }
        return try Self.capture(value)
    }
}

// MARK: - Capturing

/// Where one value's encoding goes while it is captured.
private final class CaptureSlot {
    enum Content {
        case empty
        case null
        case value(any Encodable)
        case keyed(KeyedSlots)
        case unkeyed(UnkeyedSlots)
        case single(any Encodable)
    }

    var content = Content.empty

    var captured: CapturedValue {
        switch content {
        case .empty: .keyed([:])  // encoded nothing: an empty keyed value, as a struct with no properties
        case .null: .null
        case .value(let value): .value(value)
        case .keyed(let keyed): .keyed(keyed.slots.mapValues(\.captured))
        case .unkeyed(let unkeyed): .unkeyed(unkeyed.slots.map(\.captured))
        case .single(let value): .single(.value(value))
        }
    }

    var keyed: KeyedSlots {
        if case .keyed(let keyed) = content { return keyed }
        let keyed = KeyedSlots()
        content = .keyed(keyed)
        return keyed
    }

    var unkeyed: UnkeyedSlots {
        if case .unkeyed(let unkeyed) = content { return unkeyed }
        let unkeyed = UnkeyedSlots()
        content = .unkeyed(unkeyed)
        return unkeyed
    }
}

private final class KeyedSlots {
    var slots: [String: CaptureSlot] = [:]

    func slot(_ key: some CodingKey) -> CaptureSlot {
        if let slot = slots[key.stringValue] { return slot }
        let slot = CaptureSlot()
        slots[key.stringValue] = slot
        return slot
    }
}

private final class UnkeyedSlots {
    var slots: [CaptureSlot] = []

    func append() -> CaptureSlot {
        let slot = CaptureSlot()
        slots.append(slot)
        return slot
    }
}

private struct CaptureEncoder: Encoder {
    let slot: CaptureSlot
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy _: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(CaptureKeyedContainer<Key>(slots: slot.keyed, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        CaptureUnkeyedContainer(slots: slot.unkeyed, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        CaptureSingleContainer(slot: slot, codingPath: codingPath)
    }
}

private struct CaptureKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let slots: KeyedSlots
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) { slots.slot(key).content = .null }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) { slots.slot(key).content = .value(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        CaptureEncoder(slot: slots.slot(key), codingPath: codingPath + [key]).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        CaptureEncoder(slot: slots.slot(key), codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        CaptureEncoder(slot: slots.slot(CapturedKey.super), codingPath: codingPath + [CapturedKey.super])
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        CaptureEncoder(slot: slots.slot(key), codingPath: codingPath + [key])
    }
}

private struct CaptureUnkeyedContainer: UnkeyedEncodingContainer {
    let slots: UnkeyedSlots
    let codingPath: [any CodingKey]
    var count: Int { slots.slots.count }

    mutating func encodeNil() { slots.append().content = .null }
    mutating func encode<T: Encodable>(_ value: T) { slots.append().content = .value(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        CaptureEncoder(slot: slots.append(), codingPath: codingPath + [CapturedKey(index: count)]).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        CaptureEncoder(slot: slots.append(), codingPath: codingPath + [CapturedKey(index: count)]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        CaptureEncoder(slot: slots.append(), codingPath: codingPath + [CapturedKey(index: count)])
    }
}

private struct CaptureSingleContainer: SingleValueEncodingContainer {
    let slot: CaptureSlot
    let codingPath: [any CodingKey]

    mutating func encodeNil() { slot.content = .null }
    mutating func encode<T: Encodable>(_ value: T) { slot.content = .single(value) }
}

/// A key of a captured value's container: a name, or a position.
struct CapturedKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) { self.init(index: intValue) }
    init(index: Int) {
        stringValue = String(index)
        intValue = index
    }

    /// The key `superEncoder()` and `superDecoder()` use.
    static let `super` = CapturedKey(stringValue: "super")
}
