public import Foundation

/// A type whose values bound a PostgreSQL range: `Int32` (`int4range`), `Int64`
/// (`int8range`), `Decimal` (`numrange`), `Date` (`tsrange`, `tstzrange`, `daterange`).
public protocol PostgresRangeBound: Codable, Hashable, Sendable, SQLValueConvertible {}

extension Int32: PostgresRangeBound {}
extension Int64: PostgresRangeBound {}
extension Decimal: PostgresRangeBound {}
extension Date: PostgresRangeBound {}

/// A PostgreSQL range (`int4range`, `int8range`, `numrange`, `tsrange`, `tstzrange`,
/// `daterange`, and ranges of your own over those subtypes): empty, or a lower and an upper
/// endpoint, each inclusive, exclusive or unbounded. A `Date` bound of `distantFuture` or
/// `distantPast` is PostgreSQL's `infinity` or `-infinity` — a bound, unlike an unbounded end.
///
/// Its text is PostgreSQL's (`[1,5)`, `empty`, `(,"2024-01-01 00:00:00+00"]`); as JSON it is
/// that text. The server gives integer and date ranges their canonical form: `(1,5]` is stored,
/// and read back, as `[2,6)`.
///
/// ```swift
/// let week = PostgresRange<Int32>(1..<8)                                     // [1,8)
/// let open = PostgresRange<Decimal>(lower: .exclusive(0), upper: .unbounded)  // (0,)
/// ```
public struct PostgresRange<Bound: PostgresRangeBound>: Sendable, Hashable, CustomStringConvertible, LosslessStringConvertible {
    /// One end of a range.
    public enum Endpoint: Sendable, Hashable {
        /// No bound: the range goes on forever that way.
        case unbounded
        /// The range holds this value.
        case inclusive(Bound)
        /// The range stops just short of this value.
        case exclusive(Bound)
    }

    /// The lower end (`.unbounded` for an empty range).
    public let lower: Endpoint
    /// The upper end (`.unbounded` for an empty range).
    public let upper: Endpoint
    /// Whether this is the empty range, which holds nothing.
    public let isEmpty: Bool

    /// The range from `lower` to `upper`.
    public init(lower: Endpoint, upper: Endpoint) {
        self.lower = lower
        self.upper = upper
        isEmpty = false
    }

    private init(empty: Void) {
        lower = .unbounded
        upper = .unbounded
        isEmpty = true
    }

    /// The empty range.
    public static var empty: PostgresRange { PostgresRange(empty: ()) }

    /// `[lower, upper)`.
    public init(_ range: Range<Bound>) where Bound: Comparable {
        self.init(lower: .inclusive(range.lowerBound), upper: .exclusive(range.upperBound))
    }

    /// `[lower, upper]`.
    public init(_ range: ClosedRange<Bound>) where Bound: Comparable {
        self.init(lower: .inclusive(range.lowerBound), upper: .inclusive(range.upperBound))
    }

    /// As PostgreSQL prints it: `[1,5)`, `empty`, `(,10]`, `["2024-01-01 00:00:00.000000+00",infinity)`.
    public var description: String {
        guard !isEmpty else { return "empty" }
        func text(_ endpoint: Endpoint) -> String {
            switch endpoint {
            case .unbounded: ""
            case .inclusive(let bound), .exclusive(let bound): RangeText.bound(Self.text(of: bound))
            }
        }
        let opening = if case .inclusive = lower { "[" } else { "(" }
        let closing = if case .inclusive = upper { "]" } else { ")" }
        return opening + text(lower) + "," + text(upper) + closing
    }

    /// A bound's own text, as it is sent to the server.
    static func text(of bound: Bound) -> String {
        if case .text(let text) = bound.sqlValue { return text }
        return "\(bound)"
    }

    /// Reads PostgreSQL's text for a range of `Bound`; nil otherwise.
    public init?(_ description: String) {
        guard let parsed = RangeText.parse(description) else { return nil }
        guard let (lower, upper) = parsed else { self = .empty; return }
        func endpoint(_ side: (text: String?, inclusive: Bool)) -> Endpoint? {
            guard let text = side.text else { return .unbounded }
            guard let bound = RangeText.value(Bound.self, text) else { return nil }
            return side.inclusive ? .inclusive(bound) : .exclusive(bound)
        }
        guard let low = endpoint(lower), let high = endpoint(upper) else { return nil }
        self.init(lower: low, upper: high)
    }


}

extension PostgresRange: PostgresTextCoded {
    /// `range`.
    public static var postgresTypeName: String { "range" }
}

extension PostgresRange: CellDecodable {
    init(cell: Cell) throws {
        guard let parts = try RangeText.parts(of: cell, Self.self) else { self = .empty; return }
        func endpoint(_ side: (cell: Cell?, inclusive: Bool)) throws -> Endpoint {
            guard let bound = side.cell else { return .unbounded }
            let value = try bound.decode(Bound.self)
            return side.inclusive ? .inclusive(value) : .exclusive(value)
        }
        self.init(lower: try endpoint(parts.lower), upper: try endpoint(parts.upper))
    }
}
