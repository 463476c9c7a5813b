/// One observer of a value: its handler, behind a gate that its subscription closes.
@usableFromInline
final class Observer<Value>: Sendable {
    @usableFromInline let handler: @Sendable (Update<Value>) -> Void
    @usableFromInline let gate = HandlerGate()
    /// The live query this observer keeps a member's element current for: it is not sent
    /// the updates that query's own hand-over makes (see ``QueryHandOver``), which it would ignore.
    @usableFromInline let member: ObjectIdentifier?

    init(member: ObjectIdentifier? = nil, _ handler: @escaping @Sendable (Update<Value>) -> Void) {
        self.member = member
        self.handler = handler
    }

    @inlinable func deliver(_ update: Update<Value>) { gate.run { handler(update) } }
}

/// The observers of one value and the updates waiting for them — plain state, kept under its
/// owner's lock.
///
/// Updates are delivered one at a time, in the order they happened: whoever changes the value
/// while nobody is delivering runs the delivery loop (outside the lock); a change made while
/// another thread delivers — or from inside a handler — is queued and delivered by that same
/// loop, after the current update.
@usableFromInline
struct ObserverList<Value> {
    /// One update for some observers (a change for all of them, or the first value for a new
    /// one). A struct, not an enum with payloads: in code not specialized for `Value`, each
    /// use of a payload tuple's type looks it up at run time.
    @usableFromInline struct Delivery {
        @usableFromInline let update: Update<Value>
        @usableFromInline let observers: [Observer<Value>]

        @usableFromInline init(update: Update<Value>, observers: [Observer<Value>]) {
            (self.update, self.observers) = (update, observers)
        }

        @inlinable func run() {
            for observer in observers { observer.deliver(update) }
        }
    }

    @usableFromInline var observers: [Observer<Value>] = [] {
        didSet {
            observerCount = observers.count
            soleMember = observerCount == 1 ? observers[0].member : nil
        }
    }
    /// `observers.count`, kept apart: asking an array of a type unknown here costs more than
    /// a field (this is read on every change).
    @usableFromInline var observerCount = 0
    /// The live query whose member the only observer is, if it is one (see ``Observer/member``).
    @usableFromInline var soleMember: ObjectIdentifier?
    @usableFromInline var queue: [Delivery] = []
    @usableFromInline var queueStart = 0
    @usableFromInline var isDelivering = false

    @usableFromInline var isEmpty: Bool { observerCount == 0 }

    /// Adds `observer`, first sent `initial` if given (queued with the changes, so it is never
    /// older than a change already delivered to it): returned for the caller to deliver when
    /// nobody is delivering, as ``publish(_:handingOver:)`` does.
    mutating func add(_ observer: Observer<Value>, initial: Value?) -> Delivery? {
        observers.append(observer)
        return initial.flatMap { handOut(Delivery(update: Update(old: $0, new: $0, isInitial: true), observers: [observer])) }
    }

    mutating func remove(_ observer: Observer<Value>) {
        observers.removeAll { $0 === observer }
    }

    /// The update `update` makes, for every current observer but the members of the live query
    /// handing over (see ``Observer/member``): returned for the caller to deliver (then to call
    /// ``next()`` until it returns nil) when nobody is delivering, else queued for the thread
    /// that is. With nobody to tell, `update` is not called.
    @inlinable mutating func publish(_ update: () -> Update<Value>, handingOver query: ObjectIdentifier? = nil) -> Delivery? {
        guard observerCount > 0 else { return nil }
        guard let query else { return handOut(Delivery(update: update(), observers: observers)) }
        let recipients = soleMember == query ? [] : observers.filter { $0.member != query }
        return recipients.isEmpty ? nil : handOut(Delivery(update: update(), observers: recipients))
    }

    /// `delivery` for the caller to run when nobody is delivering (the caller delivers from
    /// now on); else queued for the thread that is, and nil.
    @inlinable mutating func handOut(_ delivery: Delivery) -> Delivery? {
        guard isDelivering else {
            isDelivering = true
            return delivery
        }
        queue.append(delivery)
        return nil
    }

    /// The next delivery, or nil (and delivering stops) when the queue is empty.
    @inlinable mutating func next() -> Delivery? {
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

extension Lock {
    /// Runs `first` — a delivery ``ObserverList`` handed out — and then those queued meanwhile
    /// (`next`, guarded by this lock), outside the lock.
    @inlinable func deliver<Value>(_ first: ObserverList<Value>.Delivery, then next: () -> ObserverList<Value>.Delivery?) {
        first.run()
        while let delivery = withLock(next) { delivery.run() }
    }
}
