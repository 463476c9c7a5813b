/// A shared, writable, observable reference to a value.
///
/// A `Var` is a reference, so everyone holding it sees and changes the same value. Its
/// sub-references — `person[\.name]`, `people[2]`, `people[id: id]` — are `Var`s too, and writing
/// through one writes back into the root:
///
/// ```swift
/// let person = Var(Person(name: "Ada", city: "London"))
/// let name: Var<String> = person[\.name]
/// let subscription = name.observe { print($0.old, "->", $0.new) }
/// name.value = "Grace"            // prints "Ada -> Grace"; person.value.name == "Grace"
/// person[\.city].value = "Paris"  // name's observer is not called: the name did not change
/// ```
///
/// Observers run synchronously on the changing thread, outside any lock, and see updates in
/// the order the changes happened (see ``ObservableValue`` for other ways to receive them).
/// `Var` is `Sendable` when its value is.
public final class Var<Value>: ObservableValue {
    /// Reads the value without registering with Swift Observation.
    @usableFromInline let peek: () -> Value
    @usableFromInline let modify: (Author?, (inout Value) -> Void) -> Void
    @usableFromInline let subscribe: (Bool, @escaping @Sendable (Update<Value>) -> Void) -> Subscription
    /// Where this value sits in its root, for Swift Observation.
    @usableFromInline let part: ObservedPart
    /// What keeps this value in sync with a database, shared by every sub-reference.
    @usableFromInline let persistence: (any VarPersistence)?

    /// A new root reference holding `initialValue`.
    @inlinable public convenience init(_ initialValue: Value) {
        let store = VarStore(initialValue)
        self.init(root: store, modify: store.modify)
    }

    @usableFromInline init(peek: @escaping () -> Value,
         modify: @escaping (Author?, (inout Value) -> Void) -> Void,
         subscribe: @escaping (Bool, @escaping @Sendable (Update<Value>) -> Void) -> Subscription,
         part: ObservedPart,
         persistence: (any VarPersistence)? = nil) {
        self.peek = peek
        self.modify = modify
        self.subscribe = subscribe
        self.part = part
        self.persistence = persistence
    }

    /// A root reference over `cell` — a plain value, a live record, a live query — changed
    /// through `modify`, kept in sync by `persistence`.
    @usableFromInline convenience init<State: ValueHolding>(root cell: ObservedState<State>, modify: @escaping (Author?, (inout Value) -> Void) -> Void,
                                          persistence: (any VarPersistence)? = nil) where State.Root == Value {
        self.init(peek: cell.peek, modify: modify, subscribe: { cell.subscribe(initial: $0, $1) }, part: ObservedPart(root: cell), persistence: persistence)
    }

    /// The current value. Setting it notifies observers with no author. Read inside
    /// `withObservationTracking` (or a SwiftUI view), it registers only this part of its root:
    /// `person[\.name].value` is not invalidated by a change of the email.
    public var value: Value {
        get {
            part.registerAccess { { hasChanged($0 as! Value, $1 as! Value) } }  // swiftlint:disable:this force_cast
            return peek()
        }
        set { modify(nil) { $0 = newValue } }
    }

    /// How many changes of this value's root were published so far (see ``Update/sequence``).
    var publishedCount: UInt64 { part.publishedCount() }

    /// Sets the value on behalf of `author`, whom observers see in ``Update/author``.
    public func set(_ newValue: Value, as author: Author?) {
        modify(author) { $0 = newValue }
    }

    /// Reads, changes and writes the value as one atomic step: concurrent `update` calls
    /// never lose each other's changes. `body` must not use this `Var` (or its tree).
    ///
    /// On a live record that holds for the handles of one repository only. Another process's
    /// (or another repository's) edit is merged by value, not by intent: two processes that each turn 6 into 7 both succeed, and the row
    /// holds 7. Let the database do arithmetic that must hold across processes
    /// (`UPDATE … SET n = n + 1`); its result reaches every live handle.
    ///
    /// ```swift
    /// counter.update { $0 += 1 }
    /// ```
    @discardableResult
    public func update<Result>(as author: Author? = nil, _ body: (inout Value) -> Result) -> Result {
        var result: Result?
        modify(author) { result = body(&$0) }
        guard let result else { preconditionFailure("a Var's modify must run its body exactly once") }
        return result
    }

    /// Calls `handler` with every later change; with `initial`, first with the current value.
    /// The observation lasts until the returned subscription is cancelled or released.
    /// For a `Var` read from a database, the observation keeps the value live — following
    /// the row — even after every `Var` onto it is gone.
    public func observe(initial: Bool, _ handler: @escaping @Sendable (Update<Value>) -> Void) -> Subscription {
        let subscription = subscribe(initial, handler)
        guard let persistence else { return subscription }
        return Subscription { withExtendedLifetime(persistence) { subscription.cancel() } }
    }

    /// A reference to a part of this value, for a derived `Var` whose parent is `self`;
    /// `component` names the part (a key path, an index, an id) for Swift Observation, which
    /// reads it with `find` (nil where the value holds no such part; by default `project`,
    /// which must then never trap).
    @inlinable func projected<Part>(
        _ component: AnyHashable?,
        read project: @escaping (Value) -> Part,
        find: ((Value) -> Part?)? = nil,
        write: @escaping (inout Value, (inout Part) -> Void) -> Void,
        deliver: @escaping @Sendable (Update<Value>) -> Update<Part>?
    ) -> Var<Part> {
        projected(component, read: project, find: find, write: write, delivery: { _ in deliver })
    }

    /// The same, with a delivery made for each subscription (`delivery` runs when one is made,
    /// given the value then): one that keeps what its observer last saw. A subscription's updates are delivered one at
    /// a time, in order.
    ///
    /// Inlinable, as the subscripts that call it: made in the caller's module, where `Value`
    /// and `Part` are known, a delivery runs code compiled for them rather than looking up their
    /// types' metadata on every update.
    @inlinable func projected<Part>(
        _ component: AnyHashable?,
        read project: @escaping (Value) -> Part,
        find: ((Value) -> Part?)? = nil,
        write: @escaping (inout Value, (inout Part) -> Void) -> Void,
        delivery: @escaping (Value) -> @Sendable (Update<Value>) -> Update<Part>?
    ) -> Var<Part> {
        let observe: (Value) -> Part? = find ?? { project($0) }
        return Var<Part>(
            peek: { project(self.peek()) },
            modify: { author, body in self.modify(author) { write(&$0, body) } },
            subscribe: { initial, handler in
                let deliver = delivery(self.peek())
                return self.subscribe(initial) { update in
                    if let part = deliver(update) { handler(part) }
                }
            },
            part: part.child(component) { observe($0 as! Value) },  // swiftlint:disable:this force_cast
            persistence: persistence)
    }
}

// A Var's closures only reach its root `VarStore`, whose state is guarded by its lock.
extension Var: @unchecked Sendable where Value: Sendable {}
