import Foundation

/// Why a `json`/`jsonb` value would not decode, where `JSONDecoder` says only "The given data
/// was not valid JSON": PostgreSQL has checked that it is valid JSON, so what `JSONDecoder`
/// refuses is a number that does not fit the Swift type asked for it — a fraction or a value
/// out of range for an integer, a value beyond `Double`. The type is decoded again over the
/// parsed JSON, following its own `init(from:)`, to name that number and where it is
/// (`99999999999999999999 at items[2].count does not fit in Int`).
enum JSONNumberDiagnosis {
    /// Whether `error` is `JSONDecoder`'s word for such a number.
    static func isUnfitNumber(_ error: any Error) -> Bool {
        guard case DecodingError.dataCorrupted(let context) = error else { return false }
        return context.codingPath.isEmpty && context.debugDescription.contains("not valid JSON")
    }

    /// The number of `json` that `T` cannot hold, and its path; a general sentence when it is
    /// not found (a type that decodes numbers its own way).
    static func explain<T: Decodable>(_: T.Type, json: [UInt8]) -> String {
        let general = "a number in it does not fit its Swift type (a fraction or out of range for an integer, or beyond Double)"
        guard let tree = try? JSONSerialization.jsonObject(with: Data(json), options: [.fragmentsAllowed]) else { return general }
        do {
            _ = try T(from: NumberProbe(value: tree, codingPath: []))
        } catch let DecodingError.typeMismatch(_, context) where context.debugDescription.hasPrefix(unfit) {
            let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            let place = path.hasPrefix(".") ? String(path.dropFirst()) : path
            return String(context.debugDescription.dropFirst(unfit.count)).replacingOccurrences(of: " does not", with: place.isEmpty ? " does not" : " at \(place) does not")
        } catch {}
        return general
    }

    /// Marks the probe's own errors.
    fileprivate static let unfit = "unfit number: "

    /// `value` as the number type `T` asks for, when `T` is one: parsed from the number's text,
    /// so that only an exact fit passes (`Int8("300")`, `Int("1.5")` and `Double("1e400")`'s
    /// infinity do not).
    fileprivate static func number<T>(_ value: Any, as type: T.Type, codingPath: [any CodingKey]) throws -> T? {
        let parse: ((String) -> Any?)? = switch type {
        case is Int.Type: { Int($0) }
        case is Int8.Type: { Int8($0) }
        case is Int16.Type: { Int16($0) }
        case is Int32.Type: { Int32($0) }
        case is Int64.Type: { Int64($0) }
        case is UInt.Type: { UInt($0) }
        case is UInt8.Type: { UInt8($0) }
        case is UInt16.Type: { UInt16($0) }
        case is UInt32.Type: { UInt32($0) }
        case is UInt64.Type: { UInt64($0) }
        case is Double.Type: { Double($0).flatMap { $0.isFinite ? $0 : nil } }
        case is Float.Type: { Float($0).flatMap { $0.isFinite ? $0 : nil } }
        default: nil
        }
        guard let parse, !(value is Bool), value is NSNumber || value is Decimal else { return nil }
        let text = "\(value)"
        guard let parsed = parse(text) as? T else {
            let shown = text.count > 40 ? text.prefix(40) + "… (\(text.count) characters)" : text
            throw DecodingError.typeMismatch(type, .init(codingPath: codingPath, debugDescription: "\(unfit)the JSON number \(shown) does not fit in \(type)"))
        }
        return parsed
    }
}

/// Decodes a type over `JSONSerialization`'s tree, checking each number it asks for and
/// letting anything else through as leniently as it can: it looks for one error.
private struct NumberProbe: Decoder, SingleValueDecodingContainer {
    let value: Any
    let codingPath: [any CodingKey]
    /// The types being decoded from this same value through their own `init(from:)`: one that
    /// asks for itself again (a wrapper's single-value container) is refused, not recursed into.
    var decoding: [ObjectIdentifier] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy _: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard let object = value as? [String: Any] else { throw mismatch([String: Any].self) }
        return KeyedDecodingContainer(Keyed(object: object, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard let array = value as? [Any] else { throw mismatch([Any].self) }
        return Unkeyed(array: array, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool { value is NSNull }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if let number = try JSONNumberDiagnosis.number(value, as: type, codingPath: codingPath) { return number }
        if let exact = value as? T { return exact }
        // Dates, data and decimals are decoded by the column's own strategies: not numbers to check.
        if let placeholder = (Date() as? T) ?? (Data() as? T) ?? (Decimal() as? T) { return placeholder }
        switch type {
        case is String.Type, is Bool.Type, is any Numeric.Type: throw mismatch(type)  // not what the JSON holds here
        default:
            guard !decoding.contains(ObjectIdentifier(type)) else { throw mismatch(type) }
            var inner = self
            inner.decoding.append(ObjectIdentifier(type))
            return try T(from: inner)
        }
    }

    private func mismatch(_ type: Any.Type) -> DecodingError {
        DecodingError.typeMismatch(type, .init(codingPath: codingPath, debugDescription: "not the shape asked for"))
    }

    private struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let object: [String: Any]
        let codingPath: [any CodingKey]
        var allKeys: [Key] { object.keys.compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }
        func decodeNil(forKey key: Key) throws -> Bool { try probe(key).decodeNil() }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try probe(key).decode(type) }
        func nestedContainer<Nested: CodingKey>(keyedBy type: Nested.Type, forKey key: Key) throws -> KeyedDecodingContainer<Nested> {
            try probe(key).container(keyedBy: type)
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { try probe(key).unkeyedContainer() }
        func superDecoder() throws -> any Decoder { NumberProbe(value: object, codingPath: codingPath) }
        func superDecoder(forKey key: Key) throws -> any Decoder { try probe(key) }

        private func probe(_ key: Key) throws -> NumberProbe {
            guard let value = object[key.stringValue] else {
                throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no value"))
            }
            return NumberProbe(value: value, codingPath: codingPath + [key])
        }
    }

    private struct Unkeyed: UnkeyedDecodingContainer {
        let array: [Any]
        let codingPath: [any CodingKey]
        var currentIndex = 0
        var count: Int? { array.count }
        var isAtEnd: Bool { currentIndex >= array.count }

        mutating func decodeNil() throws -> Bool {
            guard !isAtEnd, array[currentIndex] is NSNull else { return false }
            currentIndex += 1
            return true
        }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().decode(type) }
        mutating func nestedContainer<Nested: CodingKey>(keyedBy type: Nested.Type) throws -> KeyedDecodingContainer<Nested> {
            try next().container(keyedBy: type)
        }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }
        mutating func superDecoder() throws -> any Decoder { try next() }

        private mutating func next() throws -> NumberProbe {
            guard !isAtEnd else { throw DecodingError.valueNotFound(Any.self, .init(codingPath: codingPath, debugDescription: "no more elements")) }
            defer { currentIndex += 1 }
            return NumberProbe(value: array[currentIndex], codingPath: codingPath + [IndexKey(intValue: currentIndex)])
        }
    }

    private struct IndexKey: CodingKey {
        let intValue: Int?
        var stringValue: String { "\(intValue ?? 0)" }
        init(intValue: Int) { self.intValue = intValue }
        init?(stringValue _: String) { nil }
    }
}
