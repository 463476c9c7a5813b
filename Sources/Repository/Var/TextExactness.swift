/// Whether `a` and `b`, which `==` calls equal, still hold different text: a `String`,
/// `Substring` or `Character` somewhere inside them (a property, an element, an optional's
/// payload) whose Unicode scalars differ.
///
/// `String`'s `==` is canonical equivalence: a precomposed `é` equals `e` and a combining
/// accent, and so does the synthesized `==` of a struct holding them, while the database keeps
/// them as different text. An observer of a part `person[\.address]` is told when only
/// such a spelling changed, as the database is.
///
/// Cheap where it can be: values the same bit for bit are one value, and a type that holds
/// no references holds no text outside its bits. Otherwise the values are walked by
/// reflection, to a depth of 16. Not walked: instances of classes (their `==` is their own),
/// dictionaries and sets (two equal ones may list their elements in different orders).
func holdsDifferentText<T>(_ a: T, _ b: T) -> Bool {
    if _isPOD(T.self) || isBitwiseIdentical(a, b) { return false }
    return TextWalk.differs(a, b, depth: 0)
}

/// Whether `value`'s type holds no references (`Any` is opened with `_openExistential`: passed
/// as it is, `T` would be `Any`).
private func holdsNoReferences<T>(_: T) -> Bool { _isPOD(T.self) }

/// Whether a collection's elements hold no references.
private func elementsHoldNoReferences<C: Collection>(_: C) -> Bool { _isPOD(C.Element.self) }

private enum TextWalk {
    static let maximumDepth = 16

    static func differs(_ a: Any, _ b: Any, depth: Int) -> Bool {
        if let x = a as? String, let y = b as? String { return !isBitwiseIdentical(x, y) && !x.unicodeScalars.elementsEqual(y.unicodeScalars) }
        if let x = a as? Substring, let y = b as? Substring { return !x.unicodeScalars.elementsEqual(y.unicodeScalars) }
        if let x = a as? Character, let y = b as? Character { return !x.unicodeScalars.elementsEqual(y.unicodeScalars) }
        // No text can hide in a value without references, nor in a collection of them (a rebuilt
        // `[Int]` of 10,000 elements is not walked).
        guard depth < maximumDepth, !_openExistential(a, do: holdsNoReferences) else { return false }
        if let collection = a as? any Collection, elementsHoldNoReferences(collection) { return false }
        let (left, right) = (Mirror(reflecting: a), Mirror(reflecting: b))
        switch left.displayStyle {
        case .class?, .dictionary?, .set?: return false
        default: break
        }
        // `==` said equal: children that differ in number (an enum's cases, collections of
        // other lengths) are the type's own idea of equality, not text.
        guard left.children.count == right.children.count else { return false }
        for (x, y) in zip(left.children, right.children) where differs(x.value, y.value, depth: depth + 1) {
            return true
        }
        return false
    }
}
