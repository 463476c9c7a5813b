/// Whether two elements of a live list differ as the database holds them: `==` decides, except
/// where a value is unequal to itself — a record holding NaN, which the database stores, reads
/// and compares as one value — and then a record's columns are compared as stored (see
/// ``RecordContent/differs(_:_:)``). A NaN read again is no update, and no list changes for it.
enum ElementEquality {
    static func differs<Element: Equatable>(_ a: Element, _ b: Element) -> Bool {
        guard a != b else { return false }
        // Each equal to itself: `==` told them apart for a real difference.
        if a == a && b == b { return true }
        guard let record = a as? any Record else { return true }
        return storedDiffers(record, b)
    }

    private static func storedDiffers<R: Record>(_ a: R, _ other: some Any) -> Bool {
        guard let b = other as? R else { return true }
        return RecordContent<R>.differs(a, b)
    }
}
