public import Observation

/// A state that holds an observable value.
@usableFromInline
protocol ValueHolding: SendableMetatype {
    associatedtype Root
    /// The value observers see.
    var root: Root { get }
}

/// What Swift Observation sees of an ``ObservedState``: the whole value, and parts of it.
///
/// Not generic, so that its key paths are static objects: a key path into a generic class is
/// built anew at run time on every use, which costs more than reading the value.
@usableFromInline
class ObservationSubject: Observable, @unchecked Sendable {
    // @unchecked: the registrar is thread-safe; subclasses keep their state behind a lock.
    @usableFromInline let registrar = ObservationRegistrar()

    /// The whole value, as Swift Observation sees it: `\.whole`.
    @usableFromInline var whole: Int { 0 }

    /// A part of the value, as Swift Observation sees it: a key path `\.[part: key]`, named by
    /// its path from the root. The token rides along, outside equality, so that the part is
    /// kept while Observation holds the key path (see ``ObservedParts``).
    @usableFromInline struct PartKey: Hashable, @unchecked Sendable {  // the components are immutable values
        let path: [AnyHashable]
        let token: PartToken

        @usableFromInline static func == (lhs: PartKey, rhs: PartKey) -> Bool { lhs.path == rhs.path }
        @usableFromInline func hash(into hasher: inout Hasher) { hasher.combine(path) }
    }

    @usableFromInline subscript(part key: PartKey) -> Int { 0 }
}

/// A state, the value it holds, and that value's observers — behind one lock.
///
/// Every change is one transition of the state under the lock; when the transition says so,
/// the value's update is queued for the observers, who are called after the lock is released,
/// one update at a time in the order the changes happened (see ``ObserverList``). Plain `Var`s
/// hold just their value; live values hold their sync state, so that the value and what is
/// known about it never move apart.
@usableFromInline
final class ObservedState<State: ValueHolding>: ObservationSubject, @unchecked Sendable {
    // @unchecked: `state`, `observers`, `parts` and `isTracked` are read and written only under `lock`.
    // Values leave only through `Var`, which is `Sendable` only when the value is.
    @usableFromInline let lock = Lock()
    @usableFromInline var state: State
    @usableFromInline var observers = ObserverList<State.Root>()
    /// Parts of the value Swift Observation may be tracking (see ``ObservedParts``).
    @usableFromInline var parts = ObservedParts()
    /// Whether the value was ever read under Swift Observation's registrar: until it is, no
    /// observation can be waiting for a change, and telling the registrar is skipped.
    @usableFromInline var isTracked = false
    /// How many changes of the value were published (numbering ``Update/sequence``).
    @usableFromInline var published: UInt64 = 0

    @usableFromInline init(_ state: State) {
        self.state = state
    }

    /// The value, registered with Swift Observation as read.
    func read() -> State.Root {
        registrar.access(self as ObservationSubject, keyPath: \ObservationSubject.whole)
        return lock.withLock {
            isTracked = true
            return Self.root(of: &state)
        }
    }

    /// The value, without registering with Swift Observation.
    func peek() -> State.Root {
        lock.withLock { Self.root(of: &state) }
    }

    /// `state.root`, read in place: read straight off the stored property, code not
    /// specialized for `State` copies the whole state first.
    @inlinable static func root(of state: inout State) -> State.Root { state.root }

    /// Registers access to the whole value.
    func registerAccess() {
        lock.withLock { isTracked = true }
        registrar.access(self as ObservationSubject, keyPath: \ObservationSubject.whole)
    }

    /// Registers access to the part at `path`, read through the sub-reference that keeps
    /// `cache`; `differs` makes the test of whether a change of the value changed the part.
    func registerAccess(part path: [AnyHashable], cache: PartKeyCache, differs: () -> (Any, Any) -> Bool) {
        // Read before through this sub-reference: the key it keeps keeps its part registered.
        if let keyPath = cache.keyPath {
            return registrar.access(self as ObservationSubject, keyPath: keyPath)
        }
        // The token leaves the lock inside the key, so that it is released outside it.
        let key = lock.withLock {
            isTracked = true
            return PartKey(path: path, token: parts.register(path, differs: differs()))
        }
        registrar.access(self as ObservationSubject, keyPath: cache.keyPath(for: key))
    }

    /// How many changes of the value were published so far: the ``Update/sequence`` of the last.
    var publishedCount: UInt64 { lock.withLock { published } }

    /// How many parts of the value are kept for Swift Observation (for tests).
    var trackedPartCount: Int { lock.withLock { parts.keptCount() } }

    /// Reads the state under the lock.
    @inlinable func inspect<Result>(_ body: (State) -> Result) -> Result {
        lock.withLock { Self.read(&state, body) }
    }

    /// `body(state)`, without copying the state (see ``root(of:)``).
    @inlinable static func read<Result>(_ state: inout State, _ body: (State) -> Result) -> Result { body(state) }

    /// Changes the state under the lock in a way its value does not show (bookkeeping), so
    /// nobody is told. `body` must not touch this object.
    @inlinable func update<Result>(_ body: (inout State) -> Result) -> Result {
        lock.withLock { body(&state) }
    }

    /// Runs `body` on the state under the lock (it must not touch this object); if it asks,
    /// observers hear the change of the value, on behalf of `publish`'s author.
    @discardableResult
    @inlinable func transition<Result>(_ body: (inout State) -> (publish: Author??, result: Result)) -> Result {
        // Locals rather than a tuple returned from the lock: in code not specialized for
        // `Result`, each call would build the tuple's type at run time.
        var delivery: ObserverList<State.Root>.Delivery?
        var changedParts: [PartKey]?
        var result: Result?
        lock.withLock {
            // The value before the change, only when someone compares it with the new one: a
            // copy kept across the change makes the change copy the whole value.
            let old = observers.isEmpty && parts.isEmpty ? nil : Self.root(of: &state)
            let outcome = body(&state)
            result = outcome.result
            guard let author = outcome.publish else { return }
            published += 1
            let sequence = published
            // Swift Observation is told only about values read under it at least once.
            if isTracked { changedParts = [] }
            guard let old else { return }
            let new = Self.root(of: &state)
            if isTracked { changedParts = parts.changed(from: old, to: new) }
            // A live query handing rows read from the database to their stores does not hear
            // back from each store (see ``QueryHandOver``).
            let handingOver = author == .database ? QueryHandOver.current : nil
            delivery = observers.publish({ Update(old: old, new: new, author: author, isInitial: false, sequence: sequence) },
                                         handingOver: handingOver)
        }
        if let changedParts {
            registrar.willSet(self as ObservationSubject, keyPath: \ObservationSubject.whole)
            for key in changedParts { registrar.willSet(self as ObservationSubject, keyPath: \ObservationSubject.[part: key]) }
            registrar.didSet(self as ObservationSubject, keyPath: \ObservationSubject.whole)
            for key in changedParts { registrar.didSet(self as ObservationSubject, keyPath: \ObservationSubject.[part: key]) }
        }
        if let delivery { lock.deliver(delivery) { observers.next() } }
        guard let result else { preconditionFailure("the lock runs its body") }
        return result
    }

    /// Calls `handler` with every later update; with `initial`, first with the current value.
    /// A `member` of a live query is not called with the updates that query hands over.
    func subscribe(initial: Bool, member query: ObjectIdentifier? = nil, _ handler: @escaping @Sendable (Update<State.Root>) -> Void) -> Subscription {
        let observer = Observer(member: query, handler)
        if let delivery = lock.withLock({ observers.add(observer, initial: initial ? Self.root(of: &state) : nil) }) {
            lock.deliver(delivery) { observers.next() }
        }
        return Subscription { [weak self] in
            observer.gate.close()
            self?.remove(observer)
        }
    }

    private func remove(_ observer: Observer<State.Root>) {
        lock.withLock { observers.remove(observer) }
    }
}

/// The state of a plain `Var`: just its value.
@usableFromInline
struct PlainValue<Root>: ValueHolding {
    @usableFromInline var root: Root
}

/// The state behind a tree of plain `Var`s.
@usableFromInline typealias VarStore<Root> = ObservedState<PlainValue<Root>>

extension ObservedState {
    @usableFromInline convenience init<Root>(_ root: Root) where State == PlainValue<Root> {
        self.init(PlainValue(root: root))
    }

    /// Changes the value with `body` and tells observers.
    @inlinable func modify<Root>(author: Author?, _ body: (inout Root) -> Void) where State == PlainValue<Root> {
        transition { state in
            body(&state.root)
            return (.some(author), ())
        }
    }

    /// Like `modify`, but `body` says whether it changed anything; if not, nobody is told.
    func modifyIfChanged<Root>(author: Author?, _ body: (inout Root) -> Bool) where State == PlainValue<Root> {
        transition { state in (body(&state.root) ? .some(author) : .none, ()) }
    }
}
