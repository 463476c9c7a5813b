public import Foundation

/// A value a live query's condition compares in this process, compared as PostgreSQL compares
/// it: integers as integers, `double precision` with NaN equal to itself and above
/// every number, text byte by byte (what a deterministic collation's equality is), booleans
/// `false` before `true`, UUIDs by their bytes. Types not listed here are left to the server.
@usableFromInline
package enum ConditionValue: Hashable, Sendable {
    case integer(Int64)
    case float(Double)
    case text([UInt8])
    case boolean(Bool)
    case uuid(UUID)
    /// A value of a type not compared here: known not to be NULL, and nothing else.
    case opaque

    /// Which values a column of a type holds here; nil for a type left to the server.
    package enum Kind: Sendable {
        case integer, float, text, boolean, uuid

        init?(_ type: PostgresType) {
            switch type {
            case .int2, .int4, .int8: self = .integer
            // `real` is not: a parameter compared with it is read as a `real`, a literal as a
            // `double precision` — which of the two a comparison meets is the server's call.
            case .float8: self = .float
            case .text, .varchar, .name: self = .text
            case .bool: self = .boolean
            case .uuid: self = .uuid
            default: return nil
            }
        }
    }

    /// A cell's value (nil for NULL); nil too when it cannot be read as `kind`.
    static func from(_ cell: Cell, as kind: Kind) -> ConditionValue?? {
        guard cell.bytes != nil else { return .some(nil) }
        switch kind {
        case .integer: return (try? cell.decodeInteger(Int64.self)).map { .integer($0) }
        case .float: return (try? cell.decodeDouble()).map { .float($0) }
        case .text: return cell.bytes.map { .text(Array($0)) }
        case .boolean: return (try? cell.decodeBool()).map { .boolean($0) }
        case .uuid: return (try? cell.decodeUUID()).map { .uuid($0) }
        }
    }

    /// A parameter's or literal's text as a value of `kind`, when it reads exactly as
    /// PostgreSQL would read it; nil when it does not (the server then decides).
    static func parse(_ text: String, as kind: Kind) -> ConditionValue? {
        switch kind {
        case .integer:
            return Int64(text).map { .integer($0) }
        case .float:
            switch text.lowercased() {
            case "nan": return .float(.nan)
            case "infinity", "inf", "+infinity", "+inf": return .float(.infinity)
            case "-infinity", "-inf": return .float(-.infinity)
            default:
                guard text.allSatisfy({ $0.isASCII && ($0.isNumber || "+-.eE".contains($0)) }) else { return nil }
                return Double(text).map { .float($0) }
            }
        case .text:
            return .text(Array(text.utf8))
        case .boolean:
            switch text.lowercased() {
            case "t", "true": return .boolean(true)
            case "f", "false": return .boolean(false)
            default: return nil
            }
        case .uuid:
            return UUID(uuidString: text).map { .uuid($0) }
        }
    }

    /// PostgreSQL's ordering of two values of one kind: negative, zero or positive; nil when
    /// they are of different kinds.
    static func compare(_ a: ConditionValue, _ b: ConditionValue) -> Int? {
        switch (a, b) {
        case let (.integer(x), .integer(y)): return x < y ? -1 : x == y ? 0 : 1
        case let (.float(x), .float(y)):
            if x.isNaN || y.isNaN { return x.isNaN == y.isNaN ? 0 : x.isNaN ? 1 : -1 }
            return x < y ? -1 : x == y ? 0 : 1
        case let (.text(x), .text(y)):
            return x.lexicographicallyPrecedes(y) ? -1 : x == y ? 0 : 1
        case let (.boolean(x), .boolean(y)): return x == y ? 0 : x ? 1 : -1
        case let (.uuid(x), .uuid(y)):
            let (u, v) = (withUnsafeBytes(of: x.uuid) { Array($0) }, withUnsafeBytes(of: y.uuid) { Array($0) })
            return u.lexicographicallyPrecedes(v) ? -1 : u == v ? 0 : 1
        default: return nil
        }
    }

    /// The value as an index key: equal values (to PostgreSQL) give equal keys. Floats are not
    /// indexed (0 and -0 are equal but differ in bits).
    @usableFromInline var indexKey: ConditionValue? {
        switch self {
        case .float, .opaque: return nil
        default: return self
        }
    }
}
