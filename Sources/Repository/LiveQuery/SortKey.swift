import Foundation

/// One key of a live query's order: a property, ascending or descending.
///
/// ```swift
/// let people = try await repository.readAll(Contact.self, orderBy: [.ascending(\.name)])
/// ```
///
/// Elements are ordered by Swift's `<` on these properties, then by id, so a changed row can be
/// placed without asking the server, and the order is the same in every process. A NaN
/// (`Double`, `Float`, `Decimal`) sorts above every number and equal to another NaN, as
/// PostgreSQL has it: `<` alone orders no NaN, which would scramble the list. Strings are
/// ordered by their UTF-8 bytes, as PostgreSQL's `C` collation orders text (Swift's `<` agrees
/// for text in Unicode's composed form, NFC; it would put `e` with a combining accent where
/// `é` goes). Under a linguistic collation (ICU, a locale's) the server orders differently.
public struct SortKey<Element>: Sendable {
    /// Negative, zero or positive as the first element goes before, with, or after the second.
    @usableFromInline let compare: @Sendable (Element, Element) -> Int

    /// Smaller values first.
    public static func ascending<Property: Comparable & SendableMetatype>(_ property: any KeyPath<Element, Property> & Sendable) -> SortKey {
        let path = Path(keyPath: property)
        if Property.self == String.self {
            // Property is String here, so the cast only re-labels the values.
            return SortKey { first, second in
                TextOrder.compare(unsafeBitCast(first[keyPath: path.keyPath], to: String.self), unsafeBitCast(second[keyPath: path.keyPath], to: String.self))
            }
        }
        guard let isNaN = nanTest(Property.self) else {
            return SortKey { first, second in
                let (a, b) = (first[keyPath: path.keyPath], second[keyPath: path.keyPath])
                return a < b ? -1 : (b < a ? 1 : 0)
            }
        }
        return SortKey { first, second in
            let (a, b) = (first[keyPath: path.keyPath], second[keyPath: path.keyPath])
            switch (isNaN(a), isNaN(b)) {
            case (true, true): return 0
            case (true, false): return 1
            case (false, true): return -1
            case (false, false): return a < b ? -1 : (b < a ? 1 : 0)
            }
        }
    }

    /// Whether a value is NaN, for the types that have one (decided once, not per comparison).
    private static func nanTest<Property>(_: Property.Type) -> (@Sendable (Property) -> Bool)? {
        // Property is the type compared here, so these casts only re-label the values.
        if Property.self == Double.self { return { unsafeBitCast($0, to: Double.self).isNaN } }
        if Property.self == Float.self { return { unsafeBitCast($0, to: Float.self).isNaN } }
        if Property.self == Decimal.self { return { unsafeBitCast($0, to: Decimal.self).isNaN } }
        return nil
    }

    /// A key path, opened once rather than at each comparison.
    private struct Path<Property>: @unchecked Sendable {  // key paths are immutable
        let keyPath: KeyPath<Element, Property>
    }

    /// Larger values first.
    public static func descending<Property: Comparable & SendableMetatype>(_ property: any KeyPath<Element, Property> & Sendable) -> SortKey {
        let ascending = ascending(property)
        return SortKey { ascending.compare($1, $0) }
    }

    /// Smaller values first, nil after every value: PostgreSQL's `ORDER BY … ASC` (`NULLS LAST`)
    /// on a nullable column.
    public static func ascending<Property: Comparable & SendableMetatype>(_ property: any KeyPath<Element, Property?> & Sendable) -> SortKey {
        let path = Path(keyPath: property)
        let values = SortKey<Property>.ascending(\Property.self)
        return SortKey { first, second in
            switch (first[keyPath: path.keyPath], second[keyPath: path.keyPath]) {
            case (nil, nil): return 0
            case (nil, _?): return 1
            case (_?, nil): return -1
            case let (a?, b?): return values.compare(a, b)
            }
        }
    }

    /// Larger values first, nil before every value: PostgreSQL's `ORDER BY … DESC`
    /// (`NULLS FIRST`) on a nullable column.
    public static func descending<Property: Comparable & SendableMetatype>(_ property: any KeyPath<Element, Property?> & Sendable) -> SortKey {
        let ascending = ascending(property)
        return SortKey { ascending.compare($1, $0) }
    }
}

/// The total order of a live query's elements: its sort keys, then the id (a `String` id by
/// its UTF-8 bytes, as the sort keys order strings).
@usableFromInline
struct QueryOrder<Element: Identifiable>: Sendable where Element.ID: Comparable {
    @usableFromInline let keys: [SortKey<Element>]
    /// Whether ids are strings, ordered by their bytes (decided once, not per comparison).
    @usableFromInline let idsAreStrings: Bool

    init(keys: [SortKey<Element>]) {
        self.keys = keys
        idsAreStrings = Element.ID.self == String.self
    }

    @inlinable func precedes(_ first: Element, _ second: Element) -> Bool {
        for key in keys {
            let result = key.compare(first, second)
            if result != 0 { return result < 0 }
        }
        // Element.ID is String when idsAreStrings, so the casts only re-label the values.
        if idsAreStrings { return TextOrder.compare(unsafeBitCast(first.id, to: String.self), unsafeBitCast(second.id, to: String.self)) < 0 }
        return first.id < second.id
    }

    /// Where `element` belongs in `sorted` (which must not contain it).
    @inlinable func insertionIndex(of element: Element, in sorted: some RandomAccessCollection<Element>) -> Int {
        var low = 0, high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if precedes(sorted[sorted.index(sorted.startIndex, offsetBy: middle)], element) {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low
    }
}

/// Text in the order of its UTF-8 bytes: PostgreSQL's `C` collation.
@usableFromInline
enum TextOrder {
    /// Negative, zero or positive as `a`'s UTF-8 bytes go before, with or after `b`'s.
    @usableFromInline static func compare(_ a: String, _ b: String) -> Int {
        var (a, b) = (a, b)
        return a.withUTF8 { a in
            b.withUTF8 { b in
                let common = min(a.count, b.count)
                let order = common == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, common)
                return order != 0 ? Int(order.signum()) : (a.count < b.count ? -1 : (a.count > b.count ? 1 : 0))
            }
        }
    }
}
