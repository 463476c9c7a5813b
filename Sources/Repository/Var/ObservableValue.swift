/// A value that can be read and observed: a ``Var`` or a read-only ``Derived`` value.
///
/// Everything beyond ``value`` and ``observe(initial:_:)`` — other delivery contexts, async
/// sequences, and transforms — is built on those two.
public protocol ObservableValue<Value>: AnyObject {
    /// The observed type.
    associatedtype Value

    /// The current value.
    var value: Value { get }

    /// Calls `handler` with every later update, synchronously on the changing thread and in
    /// order; with `initial`, first with the current value (``Update/isInitial``). The
    /// observation lasts until the returned subscription is cancelled or released.
    func observe(initial: Bool, _ handler: @escaping @Sendable (Update<Value>) -> Void) -> Subscription
}

extension ObservableValue {
    /// Calls `handler` with every later update (see ``observe(initial:_:)``).
    public func observe(_ handler: @escaping @Sendable (Update<Value>) -> Void) -> Subscription {
        observe(initial: false, handler)
    }
}
