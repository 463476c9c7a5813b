import Observation

/// A state that holds an observable value.
protocol ValueHolding: SendableMetatype {
    associatedtype Root
    /// The value observers see.
    var root: Root { get }
}

/// What Swift Observation sees of an ``ObservedState``: the whole value, and parts of it.
///
/// Not generic, so that its key paths are static objects: a key path into a generic class is
/// built anew at run time on every use, which costs more than reading the value.
class ObservationSubject: Observable, @unchecked Sendable {
    // @unchecked: the registrar is thread-safe; subclasses keep their state behind a lock.
    let registrar = ObservationRegistrar()

    /// The whole value, as Swift Observation sees it: `\.whole`.
    var whole: Int { 0 }

    /// A part of the value, as Swift Observation sees it: a key path `\.[part: key]`.
    struct PartKey: Hashable, @unchecked Sendable {  // the components are immutable values
        let path: [AnyHashable]
    }

    subscript(part key: PartKey) -> Int { 0 }
}

/// A state, the value it holds, and that value's observers — behind one lock.
///
/// Every change is one transition of the state under the lock; when the transition says so,
/// the value's update is queued for the observers, who are called after the lock is released,
/// one update at a time in the order the changes happened (see ``ObserverList``). Plain `Var`s
/// hold just their value; live values hold their sync state, so that the value and what is
/// known about it never move apart.
final class ObservedState<State: ValueHolding>: ObservationSubject, @unchecked Sendable {
    // @unchecked: `state`, `observers` and `parts` are read and written only under `lock`.
    // Values leave only through `Var`, which is `Sendable` only when the value is.
    private let lock = Lock()
    private var state: State
    private var observers = ObserverList<State.Root>()
    /// Parts of the value read under Swift Observation, each with how to tell whether a change
    /// of the value changed it (see ``ObservedPart``).
    private var parts: [PartKey: (Any, Any) -> Bool] = [:]

    init(_ state: State) {
        self.state = state
    }


    /// The value, registered with Swift Observation as read.
    func read() -> State.Root {
        registrar.access(self as ObservationSubject, keyPath: \ObservationSubject.whole)
        return lock.withLock { state.root }
    }

    /// The value, without registering with Swift Observation.
    func peek() -> State.Root {
        lock.withLock { state.root }
    }

    /// Registers access to the part at `path` (nil: the whole value).
    func registerAccess(part path: [AnyHashable]?, differs: @escaping (Any, Any) -> Bool) {
        guard let path else { return registrar.access(self as ObservationSubject, keyPath: \ObservationSubject.whole) }
        let key = PartKey(path: path)
        lock.withLock { if parts[key] == nil { parts[key] = differs } }
        registrar.access(self as ObservationSubject, keyPath: \ObservationSubject.[part: key])
    }

    /// Reads the state under the lock.
    func inspect<Result>(_ body: (State) -> Result) -> Result {
        lock.withLock { body(state) }
    }

    /// Changes the state under the lock in a way its value does not show (bookkeeping), so
    /// nobody is told. `body` must not touch this object.
    func update<Result>(_ body: (inout State) -> Result) -> Result {
        lock.withLock { body(&state) }
    }

    /// Runs `body` on the state under the lock (it must not touch this object); if it asks,
    /// observers hear the change of the value, on behalf of `publish`'s author.
    @discardableResult
    func transition<Result>(_ body: (inout State) -> (publish: Author??, result: Result)) -> Result {
        let (mustDeliver, changedParts, result) = lock.withLock { () -> (Bool, [PartKey]?, Result) in
            let old = state.root
            let (publish, result) = body(&state)
            guard let author = publish else { return (false, nil, result) }
            let changed = parts.isEmpty ? [] : parts.filter { $0.value(old, state.root) }.map { $0.key }
            return (observers.publish(Update(old: old, new: state.root, author: author)), changed, result)
        }
        if let changedParts {
            registrar.willSet(self as ObservationSubject, keyPath: \ObservationSubject.whole)
            for key in changedParts { registrar.willSet(self as ObservationSubject, keyPath: \ObservationSubject.[part: key]) }
            registrar.didSet(self as ObservationSubject, keyPath: \ObservationSubject.whole)
            for key in changedParts { registrar.didSet(self as ObservationSubject, keyPath: \ObservationSubject.[part: key]) }
        }
        if mustDeliver { lock.deliver { observers.next() } }
        return result
    }

    /// Calls `handler` with every later update; with `initial`, first with the current value.
    func subscribe(initial: Bool, _ handler: @escaping @Sendable (Update<State.Root>) -> Void) -> Subscription {
        let observer = Observer(handler)
        if lock.withLock({ observers.add(observer, initial: initial ? state.root : nil) }) {
            lock.deliver { observers.next() }
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
struct PlainValue<Root>: ValueHolding {
    var root: Root
}

/// The state behind a tree of plain `Var`s.
typealias VarStore<Root> = ObservedState<PlainValue<Root>>

extension ObservedState {
    convenience init<Root>(_ root: Root) where State == PlainValue<Root> {
        self.init(PlainValue(root: root))
    }

    /// Changes the value with `body` and tells observers.
    func modify<Root>(author: Author?, _ body: (inout Root) -> Void) where State == PlainValue<Root> {
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
