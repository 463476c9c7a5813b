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
/// PostgreSQL has it: `<` alone orders no NaN, which would scramble the list.
public struct SortKey<Element>: Sendable {
    /// Negative, zero or positive as the first element goes before, with, or after the second.
    let compare: @Sendable (Element, Element) -> Int

    /// Smaller values first.
    public static func ascending<Property: Comparable & SendableMetatype>(_ property: any KeyPath<Element, Property> & Sendable) -> SortKey {
        let path = Path(keyPath: property)
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
}

/// The total order of a live query's elements: its sort keys, then the id.
struct QueryOrder<Element: Identifiable>: Sendable where Element.ID: Comparable {
    let keys: [SortKey<Element>]

    func precedes(_ first: Element, _ second: Element) -> Bool {
        for key in keys {
            let result = key.compare(first, second)
            if result != 0 { return result < 0 }
        }
        return first.id < second.id
    }

    /// Where `element` belongs in `sorted` (which must not contain it).
    func insertionIndex(of element: Element, in sorted: some RandomAccessCollection<Element>) -> Int {
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
