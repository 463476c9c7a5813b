extension ObservableValue {
    /// The same value, with only the updates made by `author` (SwiftObserver's `from`).
    ///
    /// ```swift
    /// person.from(.database).observe { print("changed elsewhere:", $0.new) }
    /// ```
    public func from(_ author: Author) -> Derived<Value> {
        passing { $0.author == author }
    }

    /// The same value, without the updates made by `author` — to ignore your own echoes.
    public func notFrom(_ author: Author) -> Derived<Value> {
        passing { $0.author != author }
    }

    /// The same value, with only the updates that make it `selected`.
    public func select(_ selected: Value) -> Derived<Value> where Value: Equatable & Sendable {
        passing { $0.new == selected }
    }

    /// Calls `handler` with the next update only; the observation then ends by itself.
    @discardableResult
    public func observeOnce(_ handler: @escaping @Sendable (Update<Value>) -> Void) -> Subscription {
        let once = Locked<Subscription?>(nil)
        let subscription = observe(initial: false) { update in
            guard let subscription = once.withLock({ $0.take() }) else { return }
            subscription.cancel()
            handler(update)
        }
        once.withLock { $0 = subscription }
        return subscription
    }

    /// Updates for which `isIncluded` holds; the initial value always passes.
    private func passing(_ isIncluded: @escaping @Sendable (Update<Value>) -> Bool) -> Derived<Value> {
        Derived(
            read: { self.value },
            subscribe: { initial, handler in
                self.observe(initial: initial) { update in
                    if update.isInitial || isIncluded(update) { handler(update) }
                }
            })
    }
}
