public import Dispatch

extension ObservableValue where Value: Sendable {
    /// Calls `handler` on `queue` with every later update, in order and one at a time — also
    /// on a concurrent queue. Updates still queued when the subscription is cancelled are dropped.
    public func observe(on queue: DispatchQueue, initial: Bool = false,
                        _ handler: @escaping @Sendable (Update<Value>) -> Void) -> Subscription {
        let gate = HandlerGate()
        // A serial queue onto `queue`: a concurrent one would run the handlers at once, out of order.
        let serial = DispatchQueue(label: "Var.observe(on:)", target: queue)
        let subscription = observe(initial: initial) { update in serial.async { gate.run { handler(update) } } }
        return Subscription {
            gate.close()
            subscription.cancel()
        }
    }

    /// Calls `handler` on the main actor with every later update, in order. Updates still
    /// queued when the subscription is cancelled are dropped.
    public func observeOnMainActor(initial: Bool = false,
                                   _ handler: @escaping @MainActor @Sendable (Update<Value>) -> Void) -> Subscription {
        // The main queue is FIFO, where `Task { @MainActor in }` would not keep the order.
        observe(on: .main, initial: initial) { update in MainActor.assumeIsolated { handler(update) } }
    }

    /// The current value, then each new one, as an async sequence. Ends when the consuming
    /// task is cancelled or stops iterating. Every value waits for the consumer: one slower
    /// than the writers falls behind, and the values waiting take memory until it catches up.
    public var values: AsyncStream<Value> {
        AsyncStream { continuation in
            let subscription = observe(initial: true) { continuation.yield($0.new) }
            continuation.onTermination = { _ in subscription.cancelElsewhere() }
        }
    }

    /// Every later update, as an async sequence. Every update waits for the consumer, as with
    /// ``values``.
    public var updates: AsyncStream<Update<Value>> {
        AsyncStream { continuation in
            let subscription = observe { continuation.yield($0) }
            continuation.onTermination = { _ in subscription.cancelElsewhere() }
        }
    }
}

extension Subscription {
    /// Cancels on another thread, soon. For an `AsyncStream`'s `onTermination`: when the
    /// consuming task is cancelled, the runtime runs it holding that task's status lock, while
    /// the handler being cancelled may be yielding to the stream — and resuming that task needs
    /// the same lock. ``cancel()`` waits for a running handler, so there it would never return.
    /// A terminated stream drops what is yielded to it meanwhile.
    func cancelElsewhere() {
        DispatchQueue.global().async { self.cancel() }
    }
}
