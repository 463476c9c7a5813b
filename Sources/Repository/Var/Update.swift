/// A change of an observed value: what it was, what it is, and who changed it.
public struct Update<Value> {
    /// The value before the change (equal to ``new`` for the initial update).
    public let old: Value
    /// The value after the change.
    public let new: Value
    /// Who made the change; nil for a plain `value = …`.
    public let author: Author?
    /// Whether this is the current value sent at registration (`observe(initial: true)`),
    /// rather than a change.
    public let isInitial: Bool
    /// Which change of its root value this is, counting from 1 (0: not counted — an initial
    /// value, or an update made by hand). Lets ``History`` tell which updates a group made,
    /// whenever they are delivered.
    @usableFromInline let sequence: UInt64

    /// An update from `old` to `new` by `author`.
    public init(old: Value, new: Value, author: Author? = nil, isInitial: Bool = false) {
        self.init(old: old, new: new, author: author, isInitial: isInitial, sequence: 0)
    }

    @usableFromInline init(old: Value, new: Value, author: Author?, isInitial: Bool, sequence: UInt64) {
        self.old = old
        self.new = new
        self.author = author
        self.isInitial = isInitial
        self.sequence = sequence
    }

    /// The same update with both values transformed.
    @inlinable func map<T>(_ transform: (Value) -> T) -> Update<T> {
        Update<T>(old: transform(old), new: transform(new), author: author, isInitial: isInitial, sequence: sequence)
    }
}

extension Update: Sendable where Value: Sendable {}
extension Update: Equatable where Value: Equatable {
    /// Equal when the values, the author and `isInitial` are.
    public static func == (lhs: Update, rhs: Update) -> Bool {
        lhs.old == rhs.old && lhs.new == rhs.new && lhs.author == rhs.author && lhs.isInitial == rhs.isInitial
    }
}

extension Update: Hashable where Value: Hashable {
    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(old)
        hasher.combine(new)
        hasher.combine(author)
        hasher.combine(isInitial)
    }
}

/// Who made a change, so observers can tell their own echoes from others' changes.
///
/// ```swift
/// let editor = Author("editor")
/// person[\.name].set("Ada", as: editor)
/// person.observe { update in
///     guard update.author != editor else { return }  // ignore our own echo
/// }
/// ```
public struct Author: Hashable, Sendable, CustomStringConvertible {
    /// The author's name; two authors with the same name are the same author.
    public let name: String

    /// An author called `name`.
    public init(_ name: String) {
        self.name = name
    }

    /// The name.
    public var description: String { name }
}

/// Whether two values differ: `!=` for `Equatable` values unless they are the same bit for bit (a NaN), or text spelled otherwise inside
/// them (see ``holdsDifferentText(_:_:)``); always true for others, since they cannot be compared.
func hasChanged<T>(_ old: T, _ new: T) -> Bool {
    guard let equal = equalIfEquatable(old, new) else { return true }
    // The same bits are the same value, which `==` may deny (a NaN is unequal to itself).
    if !equal { return !isBitwiseIdentical(old, new) }
    return holdsDifferentText(old, new)
}

/// ``hasChanged(_:_:)`` for values of type `T`, with the `Equatable` conformance looked up
/// once, here, rather than on every comparison (observers of parts compare on every change).
@usableFromInline func changeTest<T>(for _: T.Type) -> any ChangeTest<T> {
    guard let type = T.self as? any Equatable.Type else { return AlwaysChanged<T>() }
    func test<E: Equatable>(_: E.Type) -> any ChangeTest<T> { Inequality<T, E>() }
    return test(type)
}

/// Tells whether a value changed (see ``changeTest(for:)``).
@usableFromInline protocol ChangeTest<Value>: Sendable {
    associatedtype Value
    func changed(_ old: Value, _ new: Value) -> Bool
}

/// `!=` of `E` — unless the two are the same bit for bit (a NaN) —, for values of a type `Value` that is `E`; for a `String` (or a `String?`), a change of its bytes
/// (`String`'s `==` is canonical equivalence: a precomposed `é` equals `e` and a combining
/// accent, which are different text to the database); for other values `==` calls equal,
/// text spelled otherwise inside them (see ``holdsDifferentText(_:_:)``).
private struct Inequality<Value, E: Equatable>: ChangeTest {
    func changed(_ old: Value, _ new: Value) -> Bool {
        // Value is E here, so these casts only re-label the values.
        if E.self == String.self { return !unsafeBitCast(old, to: String.self).utf8.elementsEqual(unsafeBitCast(new, to: String.self).utf8) }
        if E.self == String?.self {
            switch (unsafeBitCast(old, to: String?.self), unsafeBitCast(new, to: String?.self)) {
            case (let a?, let b?): return !a.utf8.elementsEqual(b.utf8)
            case (nil, nil): return false
            default: return true
            }
        }
        // The same bits are the same value, which `!=` may deny (a NaN is unequal to itself).
        if unsafeBitCast(old, to: E.self) != unsafeBitCast(new, to: E.self) { return !isBitwiseIdentical(old, new) }
        return holdsDifferentText(old, new)
    }
}

/// Values that cannot be compared count as changed.
private struct AlwaysChanged<Value>: ChangeTest {
    func changed(_: Value, _: Value) -> Bool { true }
}

/// `a == b` when the values are `Equatable`; nil when they cannot be compared that way. The
/// type is checked, not the values: no value is boxed into an existential.
func equalIfEquatable<T>(_ a: T, _ b: T) -> Bool? {
    guard let type = T.self as? any Equatable.Type else { return nil }
    func equal<E: Equatable>(_: E.Type) -> Bool {
        // T is E here, so these casts only re-label the values.
        unsafeBitCast(a, to: E.self) == unsafeBitCast(b, to: E.self)
    }
    return equal(type)
}

/// Whether `a != b` while each `==` itself (no NaN in either), when the values are
/// `Equatable`; false when they are not. The conformance is looked up once for the three.
@usableFromInline func unequalAndEachSelfEqual<T>(_ a: T, _ b: T) -> Bool {
    guard let type = T.self as? any Equatable.Type else { return false }
    func test<E: Equatable>(_: E.Type) -> Bool {
        // T is E here, so these casts only re-label the values.
        let (x, y) = (unsafeBitCast(a, to: E.self), unsafeBitCast(b, to: E.self))
        return x != y && x == x && y == y
    }
    return test(type)
}

/// Whether `a` and `b` are the same bit for bit: the same scalars, and references to the same
/// storage (a `String` copied, not rebuilt). Then they are one value however it is compared or
/// stored. False says nothing: equal values may differ in their bits (separate storage,
/// padding), so callers compare another way then.
@inlinable func isBitwiseIdentical<T>(_ a: T, _ b: T) -> Bool {
    withUnsafeBytes(of: a) { x in
        withUnsafeBytes(of: b) { y in
            // A word at a time, then the bytes left.
            var offset = 0
            while offset + 8 <= x.count {
                guard x.loadUnaligned(fromByteOffset: offset, as: UInt64.self) == y.loadUnaligned(fromByteOffset: offset, as: UInt64.self) else { return false }
                offset += 8
            }
            while offset < x.count {
                guard x[offset] == y[offset] else { return false }
                offset += 1
            }
            return true
        }
    }
}
