
/// Keeps an observation alive: cancelled by ``cancel()`` or when released.
///
/// ```swift
/// var subscriptions = Set<Subscription>()
/// person[\.name].observe { print($0.new) }.store(in: &subscriptions)
/// ```
public final class Subscription: Sendable, Hashable {
    private let onCancel: Locked<(@Sendable () -> Void)?>

    /// A subscription that runs `onCancel` once, when cancelled or released.
    public init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = Locked(onCancel)
    }

    deinit { cancel() }

    /// Stops the observation. Once this returns, the handler is not running on another thread
    /// and is never called again (a handler may cancel its own subscription); calling it again
    /// does nothing.
    public func cancel() {
        onCancel.withLock { action in
            defer { action = nil }
            return action
        }?()
    }

    /// Keeps this subscription alive as long as `set` holds it.
    public func store(in set: inout Set<Subscription>) {
        set.insert(self)
    }

    /// Subscriptions are equal when they are the same object.
    public static func == (lhs: Subscription, rhs: Subscription) -> Bool { lhs === rhs }

    /// Hashes the object's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
