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
    ///
    /// For a live value, the changing thread may be the change feed's: a handler must not block
    /// it waiting for the repository's work (start a task instead) — under logical replication
    /// the repository's reads wait for that thread.
    func observe(initial: Bool, _ handler: @escaping @Sendable (Update<Value>) -> Void) -> Subscription
}

extension ObservableValue {
    /// Calls `handler` with every later update (see ``observe(initial:_:)``).
    public func observe(_ handler: @escaping @Sendable (Update<Value>) -> Void) -> Subscription {
        observe(initial: false, handler)
    }
}
