import Observation
import Synchronization

/// The state behind a tree of `Var`s: the root value, its observers, and the updates waiting
/// to be delivered.
///
/// Values change under the lock; handlers run outside it. Updates are delivered one at a time
/// in the order the changes happened: a change made while another thread is delivering — or
/// from inside a handler — is queued and delivered by that same loop, after the current update.
final class VarStore<Root>: Observable, @unchecked Sendable {
    // @unchecked: every mutable property below is read and written only under `lock`. Values
    // leave only through `Var`, which is `Sendable` only when `Root` is.

    final class Observer: Sendable {
        let handler: @Sendable (Update<Root>) -> Void
        let isCancelled = Atomic<Bool>(false)
        init(_ handler: @escaping @Sendable (Update<Root>) -> Void) { self.handler = handler }
    }

    private enum Delivery {
        case change(Update<Root>, to: [Observer])
        case initial(Root, to: Observer)
    }

    private let lock = Lock()
    private var root: Root
    private var observers: [Observer] = []
    private var queue: [Delivery] = []
    private var queueStart = 0
    private var isDelivering = false
    private let registrar = ObservationRegistrar()

    init(_ root: Root) {
        self.root = root
    }

    func read() -> Root {
        registrar.access(self, keyPath: \.root)
        return lock.withLock { root }
    }

    /// Changes the root with `body` (under the lock: it must not touch this store), then
    /// delivers the update.
    func modify(author: Author?, _ body: (inout Root) -> Void) {
        registrar.willSet(self, keyPath: \.root)
        let mustDeliver = lock.withLock {
            let old = root
            body(&root)
            guard !observers.isEmpty else { return false }
            return enqueue(.change(Update(old: old, new: root, author: author), to: observers))
        }
        registrar.didSet(self, keyPath: \.root)
        if mustDeliver { deliverQueued() }
    }

    /// Like `modify`, but `body` says whether it changed anything; if not, nobody is notified.
    func modifyIfChanged(author: Author?, _ body: (inout Root) -> Bool) {
        registrar.willSet(self, keyPath: \.root)
        let mustDeliver = lock.withLock {
            let old = root
            guard body(&root), !observers.isEmpty else { return false }
            return enqueue(.change(Update(old: old, new: root, author: author), to: observers))
        }
        registrar.didSet(self, keyPath: \.root)
        if mustDeliver { deliverQueued() }
    }

    func subscribe(initial: Bool, _ handler: @escaping @Sendable (Update<Root>) -> Void) -> Subscription {
        let observer = Observer(handler)
        let mustDeliver = lock.withLock {
            observers.append(observer)
            // Queued with the changes, so the initial value is never older than a change
            // already delivered to this observer, and none is skipped.
            return initial ? enqueue(.initial(root, to: observer)) : false
        }
        if mustDeliver { deliverQueued() }
        return Subscription { [weak self] in self?.remove(observer) }
    }

    private func remove(_ observer: Observer) {
        observer.isCancelled.store(true, ordering: .releasing)
        lock.withLock { observers.removeAll { $0 === observer } }
    }

    /// Queues a delivery (under the lock); true when the caller must run the delivery loop.
    private func enqueue(_ delivery: Delivery) -> Bool {
        queue.append(delivery)
        defer { isDelivering = true }
        return !isDelivering
    }

    private func nextDelivery() -> Delivery? {
        lock.withLock {
            guard queueStart < queue.count else {
                queue.removeAll(keepingCapacity: true)
                queueStart = 0
                isDelivering = false
                return nil
            }
            defer { queueStart += 1 }
            return queue[queueStart]
        }
    }

    private func deliverQueued() {
        while let delivery = nextDelivery() {
            switch delivery {
            case .change(let update, let observers):
                for observer in observers where !observer.isCancelled.load(ordering: .acquiring) {
                    observer.handler(update)
                }
            case .initial(let value, let observer):
                if !observer.isCancelled.load(ordering: .acquiring) {
                    observer.handler(Update(old: value, new: value, isInitial: true))
                }
            }
        }
    }
}
