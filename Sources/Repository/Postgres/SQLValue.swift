public import Foundation

/// A statement parameter as it travels to PostgreSQL.
///
/// Text values are sent with an unspecified type so the server infers it from context
/// (`$1` compared with a `bigint` column is read as a `bigint`, inserted into `jsonb` is parsed
/// as JSON); bytes are sent in binary as `bytea`. Values never become part of the SQL text.
///
/// Two values are equal when they send the same bytes: texts are compared by their UTF-8, not
/// as Swift compares `String`s (canonically equivalent spellings, such as an `é` precomposed
/// and an `e` followed by a combining accent, are different values to the database).
public enum SQLValue: Sendable, Hashable {
    /// SQL `NULL`.
    case null
    /// A value in PostgreSQL's text format; the server infers its type.
    case text(String)
    /// Raw bytes, sent in binary as `bytea`.
    case bytes([UInt8])

    /// Whether `lhs` and `rhs` send the same bytes.
    public static func == (lhs: SQLValue, rhs: SQLValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.text(let a), .text(let b)): a.utf8.count == b.utf8.count && a.utf8.elementsEqual(b.utf8)
        case (.bytes(let a), .bytes(let b)): a == b
        default: false
        }
    }

    /// Hashes the value (values equal by ``==(_:_:)`` hash alike).
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .text(let text):
            hasher.combine(1)
            hasher.combine(text)  // texts with the same bytes are equal Strings too
        case .bytes(let bytes):
            hasher.combine(2)
            hasher.combine(bytes)
        }
    }
}

/// A Swift value that can be sent as a statement parameter.
public protocol SQLValueConvertible: Sendable {
    /// This value as a statement parameter.
    var sqlValue: SQLValue { get }
}

extension SQLValue: SQLValueConvertible {
    /// The value itself.
    public var sqlValue: SQLValue { self }
}

extension SQLValue {
    /// A `jsonb`/`json` parameter holding `value` encoded as JSON.
    public static func json(_ value: some Encodable) throws -> SQLValue {
        .text(String(decoding: try JSONCoding.encoder.encode(value), as: UTF8.self))
    }
}

extension String: SQLValueConvertible {
    /// The string as text.
    public var sqlValue: SQLValue { .text(self) }
}

extension Substring: SQLValueConvertible {
    /// The substring as text.
    public var sqlValue: SQLValue { .text(String(self)) }
}

extension Bool: SQLValueConvertible {
    /// `t` or `f`.
    public var sqlValue: SQLValue { .text(self ? "t" : "f") }
}

extension SQLValueConvertible where Self: BinaryInteger {
    /// The integer in decimal.
    public var sqlValue: SQLValue { .text(String(self)) }
}

extension Int: SQLValueConvertible {}
extension Int8: SQLValueConvertible {}
extension Int16: SQLValueConvertible {}
extension Int32: SQLValueConvertible {}
extension Int64: SQLValueConvertible {}
extension UInt: SQLValueConvertible {}
extension UInt8: SQLValueConvertible {}
extension UInt16: SQLValueConvertible {}
extension UInt32: SQLValueConvertible {}
extension UInt64: SQLValueConvertible {}

extension SQLValueConvertible where Self: BinaryFloatingPoint & LosslessStringConvertible {
    /// The shortest decimal that reads back as the same value; `Infinity`, `-Infinity`, `NaN`.
    /// A whole number below 2^53 is written without a fraction (`3`, `-0`), so that an integer
    /// column takes it as a floating-point one does (`3.0` is no `integer`'s text).
    public var sqlValue: SQLValue {
        if isNaN { return .text("NaN") }
        if isInfinite { return .text(self < 0 ? "-Infinity" : "Infinity") }
        if self == 0 { return .text(sign == .minus ? "-0" : "0") }
        if magnitude < 0x1p53, self == rounded(.towardZero) { return .text(String(Int64(self))) }
        return .text(description)
    }
}

extension Double: SQLValueConvertible {}
extension Float: SQLValueConvertible {}

extension Decimal: SQLValueConvertible {
    /// The decimal in PostgreSQL `numeric` syntax.
    public var sqlValue: SQLValue { .text(isNaN ? "NaN" : description) }
}

extension UUID: SQLValueConvertible {
    /// The canonical lowercase form.
    public var sqlValue: SQLValue { .text(uuidString.lowercased()) }
}

extension Date: SQLValueConvertible {
    /// An ISO-8601 `timestamptz` in UTC with microseconds.
    public var sqlValue: SQLValue { .text(TimestampFormat.string(from: self)) }
}

extension Data: SQLValueConvertible {
    /// The bytes as `bytea`.
    public var sqlValue: SQLValue { .bytes([UInt8](self)) }
}

extension Optional: SQLValueConvertible where Wrapped: SQLValueConvertible {
    /// `NULL` for `nil`, else the wrapped value.
    public var sqlValue: SQLValue { self?.sqlValue ?? .null }
}

extension Array: SQLValueConvertible where Element: SQLValueConvertible {
    /// A PostgreSQL array literal such as `{"a","b",NULL}`; an array of arrays is a
    /// multidimensional one (`{{"1","2"},{"3","4"}}`), which must be rectangular (the server
    /// refuses one that is not; a row's encoding refuses it before anything is sent).
    public var sqlValue: SQLValue { .text(ArrayLiteral.string(arrayNode)) }
}
