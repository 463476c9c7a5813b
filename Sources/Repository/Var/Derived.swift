/// A read-only value derived from a ``Var`` or another derived value, kept current.
///
/// ```swift
/// let initials = person.map { $0.name.prefix(1) }
/// let adults = person.filter { $0.age >= 18 }   // updates only while the person is an adult
/// ```
public final class Derived<Value>: ObservableValue {
    private let read: () -> Value
    private let subscribe: (Bool, @escaping @Sendable (Update<Value>) -> Void) -> Subscription

    init(read: @escaping () -> Value,
         subscribe: @escaping (Bool, @escaping @Sendable (Update<Value>) -> Void) -> Subscription) {
        self.read = read
        self.subscribe = subscribe
    }

    /// The current value.
    public var value: Value { read() }

    /// See ``ObservableValue/observe(initial:_:)``.
    public func observe(initial: Bool, _ handler: @escaping @Sendable (Update<Value>) -> Void) -> Subscription {
        subscribe(initial, handler)
    }
}

// A derived value only reads through its source, which is `Sendable` under the same condition.
extension Derived: @unchecked Sendable where Value: Sendable {}

extension ObservableValue {
    private func derived<T>(read: @escaping (Value) -> T, deliver: @escaping @Sendable (Update<Value>) -> Update<T>?) -> Derived<T> {
        Derived(
            read: { read(self.value) },
            subscribe: { initial, handler in
                self.observe(initial: initial) { update in
                    if let derived = deliver(update) { handler(derived) }
                }
            })
    }

    /// The value transformed by `transform`; observers run when the result changed
    /// (compared with `==` when `Equatable`, and any text inside by its Unicode scalars).
    public func map<T>(_ transform: @escaping @Sendable (Value) -> T) -> Derived<T> {
        let changed = changeTest(for: T.self)
        return derived(read: transform) { update in
            let mapped = update.map(transform)
            return mapped.isInitial || changed.changed(mapped.old, mapped.new) ? mapped : nil
        }
    }

    /// The same value, with only the updates whose new value satisfies `isIncluded`.
    public func filter(_ isIncluded: @escaping @Sendable (Value) -> Bool) -> Derived<Value> {
        derived(read: { $0 }) { isIncluded($0.new) ? $0 : nil }
    }

    /// The same value, without updates that leave it equal to what it was.
    public func removeDuplicates() -> Derived<Value> where Value: Equatable & SendableMetatype {
        derived(read: { $0 }) { $0.isInitial || $0.old != $0.new ? $0 : nil }
    }

    /// An optional value with nil replaced by `defaultValue`.
    public func unwrapped<Wrapped: Sendable>(or defaultValue: Wrapped) -> Derived<Wrapped> where Value == Wrapped? {
        derived(read: { $0 ?? defaultValue }) { update in
            update.map { $0 ?? defaultValue }
        }
    }
}
