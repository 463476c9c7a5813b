import Foundation

/// Why a `json`/`jsonb` value would not decode, where `JSONDecoder` says only "The given data
/// was not valid JSON": PostgreSQL has checked that it is valid JSON, so what `JSONDecoder`
/// refuses is a number that does not fit the Swift type asked for it — a fraction or a value
/// out of range for an integer, a value beyond `Double`. The type is decoded again over the
/// parsed JSON, following its own `init(from:)`, to name that number and where it is
/// (`99999999999999999999 at items[2].count does not fit in Int`).
enum JSONNumberDiagnosis {
    /// Whether `error` is `JSONDecoder`'s "not valid JSON", said of a value PostgreSQL holds
    /// as valid: a number that does not fit, or something else Foundation's reader refuses
    /// (nesting deeper than it reads).
    static func isRefusedValidJSON(_ error: any Error) -> Bool {
        guard case DecodingError.dataCorrupted(let context) = error else { return false }
        return context.codingPath.isEmpty && context.debugDescription.contains("not valid JSON")
    }

    /// The number of `json` that `T` cannot hold, and its path; a general sentence when it is
    /// not found (a type that decodes numbers its own way, or JSON Foundation cannot read).
    static func explain<T: Decodable>(_: T.Type, json: [UInt8]) -> String {
        guard let tree = try? JSONSerialization.jsonObject(with: Data(json), options: [.fragmentsAllowed]) else {
            return "Foundation's JSON reader refuses it, though PostgreSQL holds it as valid JSON: a number beyond Double, or nesting deeper than it reads"
        }
        do {
            _ = try T(from: NumberProbe(value: tree, codingPath: []))
        } catch let unfit as UnfitNumber {
            return unfit.description
        } catch {}
        return "a number in it does not fit its Swift type (a fraction or out of range for an integer, or beyond Double)"
    }

    /// `value` as the number type `T` asks for, when `T` is one: parsed from the number's text,
    /// so that only an exact fit passes (`Int8("300")`, `Int("1.5")` and `Double("1e400")`'s
    /// infinity do not; `1e2` is 100 for an integer, as `JSONDecoder` reads it).
    fileprivate static func number<T>(_ value: Any, as type: T.Type, codingPath: [any CodingKey]) throws -> T? {
        func integer<I: FixedWidthInteger>(_: I.Type) -> (String) -> Any? { { I($0) ?? Double($0).flatMap { I(exactly: $0) } } }
        let parse: ((String) -> Any?)? = switch type {
        case is Int.Type: integer(Int.self)
        case is Int8.Type: integer(Int8.self)
        case is Int16.Type: integer(Int16.self)
        case is Int32.Type: integer(Int32.self)
        case is Int64.Type: integer(Int64.self)
        case is UInt.Type: integer(UInt.self)
        case is UInt8.Type: integer(UInt8.self)
        case is UInt16.Type: integer(UInt16.self)
        case is UInt32.Type: integer(UInt32.self)
        case is UInt64.Type: integer(UInt64.self)
        case is Double.Type: { Double($0).flatMap { $0.isFinite ? $0 : nil } }
        case is Float.Type: { Float($0).flatMap { $0.isFinite ? $0 : nil } }
        default: nil
        }
        guard let parse, !(value is Bool), value is NSNumber || value is Decimal else { return nil }
        let text = "\(value)"
        guard let parsed = parse(text) as? T else { throw UnfitNumber(text: text, type: type, codingPath: codingPath) }
        return parsed
    }
}

/// The number the probe found that its Swift type cannot hold, and where.
private struct UnfitNumber: Error, CustomStringConvertible {
    let text: String
    let type: Any.Type
    let codingPath: [any CodingKey]

    /// `the JSON number 1.5 at items[2].count does not fit in Int`; keys as the JSON has them
    /// (escaped where the message is shown), a long number cut.
    var description: String {
        let path = codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        let place = path.isEmpty ? "" : " at " + (path.hasPrefix(".") ? String(path.dropFirst()) : path)
        let shown = text.count > 40 ? text.prefix(40) + "… (\(text.count) characters)" : text
        return "the JSON number \(shown)\(place) does not fit in \(type)"
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
        // A leaf as it is (containers go through the type's own decoding, numbers checked).
        if !(value is [Any] || value is [String: Any]), let exact = value as? T { return exact }
        // Dates, data, decimals and URLs are decoded their own way: not numbers to check.
        if let placeholder = (Date() as? T) ?? (Data() as? T) ?? (Decimal() as? T) ?? (URL(fileURLWithPath: "/") as? T) { return placeholder }
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

    /// An object's members, each probed under its key.
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
        func superDecoder() throws -> any Decoder { NumberProbe(value: object["super"] ?? NSNull(), codingPath: codingPath + [SuperKey()]) }
        func superDecoder(forKey key: Key) throws -> any Decoder { try probe(key) }

        private func probe(_ key: Key) throws -> NumberProbe {
            guard let value = object[key.stringValue] else {
                throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no value"))
            }
            return NumberProbe(value: value, codingPath: codingPath + [key])
        }
    }

    /// An array's elements, each probed at its index.
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

    /// The key `superDecoder()` reads, as `JSONDecoder` names it.
    private struct SuperKey: CodingKey {
        var stringValue: String { "super" }
        var intValue: Int? { nil }
        init() {}
        init?(stringValue _: String) { nil }
        init?(intValue _: Int) { nil }
    }

    /// An array element's place in the coding path.
    private struct IndexKey: CodingKey {
        let intValue: Int?
        var stringValue: String { "\(intValue ?? 0)" }
        init(intValue: Int) { self.intValue = intValue }
        init?(stringValue _: String) { nil }
    }
}
