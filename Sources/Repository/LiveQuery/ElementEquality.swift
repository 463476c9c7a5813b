/// Whether two elements of a live list differ as the database holds them. Elements the same bit
/// for bit do not; elements `==` tells apart, each equal to itself, do. The rest — `==` says
/// equal, or a value is unequal to itself (a record holding NaN, which the database stores,
/// reads and compares as one value) — are records compared column by column as stored (see
/// ``RecordContent/differs(_:_:)``): `==` says equal of text spelled with different bytes
/// (`String` compares canonically), of `0.0` and `-0.0`, and of whatever a type's own `==`
/// leaves out. A NaN read again is no update, and no list changes for it; an edit to a
/// canonically equal spelling is one.
@usableFromInline
enum ElementEquality {
    @inlinable static func differs<Element: Equatable>(_ a: Element, _ b: Element) -> Bool {
        if isBitwiseIdentical(a, b) { return false }
        // Each equal to itself: `==` told them apart for a real difference.
        if a != b && a == a && b == b { return true }
        guard let record = a as? any Record else { return a != b }
        return storedDiffers(record, b)
    }

    @usableFromInline static func storedDiffers<R: Record>(_ a: R, _ other: some Any) -> Bool {
        guard let b = other as? R else { return true }
        return RecordContent<R>.differs(a, b)
    }
}
