import Foundation

/// Merging two versions of a `Codable` value property by property, exactly: the merged value
/// is decoded from the properties themselves (see ``CapturedValue``), never re-encoded, and a
/// merge that cannot be made throws rather than falling back.
enum ExactMerge {
    /// Why a merge could not be made.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// `target` with the top-level `properties` taken from `source` (a property `source` leaves
    /// out — a nil optional — is left out of the result too), every other bit from `target`.
    static func replacing<Value: Codable>(_ properties: Set<String>, in target: Value, from source: Value) throws -> Value {
        guard !properties.isEmpty else { return target }
        guard case .keyed(var merged) = try CapturedValue.capture(target), case .keyed(let donor) = try CapturedValue.capture(source) else {
            throw Failure(description: "\(Value.self) does not encode as named properties, so its properties cannot be merged")
        }
        for property in properties { merged[property] = donor[property] }
        do {
            return try CapturedValue.decode(Value.self, from: .keyed(merged), codingPath: [])
        } catch {
            throw Failure(description: "\(Value.self) could not be rebuilt from merged properties (\(properties.sorted().joined(separator: ", "))): \(error)")
        }
    }

    /// The name ``restoring(from:changedTo:in:)`` gives a conflict over the whole value.
    static let wholeValue = "self"

    /// `current` with what changed between `from` and `to` set back to `from`'s — unless
    /// `current` no longer holds `to`'s there (someone changed it since): those are left as
    /// they are and named. Values with named properties (structs, through optionals and other
    /// single-value wrappers) are merged property by property; others as a whole, named
    /// ``wholeValue``. A merge that cannot be made leaves `current` and names ``wholeValue``.
    static func restoring<Value: Codable>(from: Value, changedTo to: Value, in current: Value) -> (value: Value, conflicts: [String]) {
        do {
            let (merged, conflicts) = try restoring(from: .value(from), to: .value(to), in: .value(current))
            guard let merged else { return (current, conflicts) }
            return (try CapturedValue.decode(Value.self, from: merged, codingPath: []), conflicts)
        } catch {
            return (current, [wholeValue])
        }
    }

    /// The merge on captured values; nil when nothing is to change.
    private static func restoring(from: CapturedValue, to: CapturedValue, in current: CapturedValue) throws -> (CapturedValue?, [String]) {
        guard let openFrom = try open(from), let openTo = try open(to), let openCurrent = try open(current) else {
            return try restoringWhole(from: from, to: to, in: current)
        }
        switch (openFrom, openTo, openCurrent) {
        case (.keyed(let before), .keyed(let after), .keyed(var now)):
            var conflicts: [String] = []
            var changed = false
            for key in Set(before.keys).union(after.keys) where try !same(before[key], after[key]) {
                if try same(now[key], after[key]) {
                    now[key] = before[key]
                    changed = true
                } else if try !same(now[key], before[key]) {
                    conflicts.append(key)
                }
            }
            return (changed ? .keyed(now) : nil, conflicts.sorted())
        case (.single(let before), .single(let after), .single(let now)):
            let (inner, conflicts) = try restoring(from: before, to: after, in: now)
            return (inner.map(CapturedValue.single), conflicts)
        default:
            return try restoringWhole(from: from, to: to, in: current)
        }
    }

    private static func restoringWhole(from: CapturedValue, to: CapturedValue, in current: CapturedValue) throws -> (CapturedValue?, [String]) {
        if try same(current, to) { return (try same(from, to) ? nil : from, []) }
        return (nil, try same(current, from) ? [] : [wholeValue])
    }

    /// `captured` opened one level; nil for a scalar, which opens into itself.
    private static func open(_ captured: CapturedValue) throws -> CapturedValue? {
        guard case .value(let value) = captured else { return captured }
        if atomSame(value, value) != nil { return nil }
        let opened = try captured.opened()
        if case .single(.value(let inner)) = opened, type(of: inner) == type(of: value) { return nil }
        return opened
    }

    // MARK: - Sameness

    /// Whether two captured values are the same to the bit: floating-point numbers by their
    /// bits (NaN is the same as itself), other values by their parts.
    static func same(_ a: CapturedValue?, _ b: CapturedValue?) throws -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (nil, _?), (_?, nil): return false
        case (let a?, let b?): return try same(a, b)
        }
    }

    private static func same(_ a: CapturedValue, _ b: CapturedValue) throws -> Bool {
        if a.isNil || b.isNil { return a.isNil && b.isNil }
        if case .value(let x) = a, case .value(let y) = b, let atom = atomSame(x, y) { return atom }
        guard let openA = try open(a), let openB = try open(b) else {
            // A scalar of a type not listed here: equal by its own `==`, if it has one.
            guard case .value(let x) = a, case .value(let y) = b, let equatable = x as? any Equatable else { return false }
            return isEqual(equatable, y)
        }
        switch (openA, openB) {
        case (.keyed(let x), .keyed(let y)):
            guard x.count == y.count else { return false }
            for (key, value) in x {
                guard let other = y[key], try same(value, other) else { return false }
            }
            return true
        case (.unkeyed(let x), .unkeyed(let y)):
            guard x.count == y.count else { return false }
            return try zip(x, y).allSatisfy { try same($0, $1) }
        case (.single(let x), .single(let y)):
            return try same(x, y)
        default:
            return false
        }
    }

    /// Values compared directly: floats by bits, strings by their UTF-8, other scalars by equality; nil
    /// when the values are not of one such type.
    private static func atomSame(_ a: Any, _ b: Any) -> Bool? {
        switch (a, b) {
        case let (x as Double, y as Double): x.bitPattern == y.bitPattern
        case let (x as Float, y as Float): x.bitPattern == y.bitPattern
        case let (x as String, y as String): x.utf8.elementsEqual(y.utf8)  // not canonical equivalence: the bytes
        case let (x as Bool, y as Bool): x == y
        case let (x as Data, y as Data): x == y
        case let (x as any BinaryInteger, y as any BinaryInteger): type(of: x) == type(of: y) && isEqual(x, y)
        default: nil
        }
    }

    private static func isEqual<E: Equatable>(_ a: E, _ b: Any) -> Bool {
        (b as? E).map { $0 == a } ?? false
    }
}
