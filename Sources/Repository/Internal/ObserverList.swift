/// One observer of a value: its handler, behind a gate that its subscription closes.
final class Observer<Value>: Sendable {
    private let handler: @Sendable (Update<Value>) -> Void
    let gate = HandlerGate()

    init(_ handler: @escaping @Sendable (Update<Value>) -> Void) { self.handler = handler }

    func deliver(_ update: Update<Value>) { gate.run { handler(update) } }
}

/// The observers of one value and the updates waiting for them — plain state, kept under its
/// owner's lock.
///
/// Updates are delivered one at a time, in the order they happened: whoever changes the value
/// while nobody is delivering runs the delivery loop (outside the lock); a change made while
/// another thread delivers — or from inside a handler — is queued and delivered by that same
/// loop, after the current update.
struct ObserverList<Value> {
    enum Delivery {
        case change(Update<Value>, to: [Observer<Value>])
        case initial(Value, to: Observer<Value>)

        func run() {
            switch self {
            case .change(let update, let observers):
                for observer in observers { observer.deliver(update) }
            case .initial(let value, let observer):
                observer.deliver(Update(old: value, new: value, isInitial: true))
            }
        }
    }

    private var observers: [Observer<Value>] = []
    private var queue: [Delivery] = []
    private var queueStart = 0
    private var isDelivering = false

    var isEmpty: Bool { observers.isEmpty }

    /// Adds `observer`, first sent `initial` if given (queued with the changes, so it is never
    /// older than a change already delivered to it). True when the caller must deliver.
    mutating func add(_ observer: Observer<Value>, initial: Value?) -> Bool {
        observers.append(observer)
        return initial.map { enqueue(.initial($0, to: observer)) } ?? false
    }

    mutating func remove(_ observer: Observer<Value>) {
        observers.removeAll { $0 === observer }
    }

    /// Queues `update` for every current observer. True when the caller must deliver.
    mutating func publish(_ update: Update<Value>) -> Bool {
        guard !observers.isEmpty else { return false }
        return enqueue(.change(update, to: observers))
    }

    /// The next delivery, or nil (and delivering stops) when the queue is empty.
    mutating func next() -> Delivery? {
        guard queueStart < queue.count else {
            queue.removeAll(keepingCapacity: true)
            queueStart = 0
            isDelivering = false
            return nil
        }
        defer { queueStart += 1 }
        return queue[queueStart]
    }

    private mutating func enqueue(_ delivery: Delivery) -> Bool {
        queue.append(delivery)
        defer { isDelivering = true }
        return !isDelivering
    }
}

extension Lock {
    /// Runs the deliveries `list` (guarded by this lock) has queued, outside the lock.
    func deliver<Value>(_ next: () -> ObserverList<Value>.Delivery?) {
        while let delivery = withLock(next) { delivery.run() }
    }
}
