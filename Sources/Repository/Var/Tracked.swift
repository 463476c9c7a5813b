/// A property wrapper for a `Var` held by a class: every change of the `Var` — a local edit, or
/// for a live handle a change made by another process — is announced to the class that holds
/// it, the way `@Published` announces through `objectWillChange`.
///
/// ```swift
/// @Observable final class PersonModel: TrackingOwner {
///     @ObservationIgnored @Tracked var person: Var<Person>
///     var changes = 0                                   // observed by the UI
///     init(_ person: Var<Person>) { _person = Tracked(wrappedValue: person) }
///     func trackedVarDidChange(_ change: TrackedChange) { changes += 1 }
/// }
/// ```
///
/// The owner hears of changes once the property has been read (the wrapper learns its owner
/// then), on the changing thread; the observation ends with the owner. An owner that conforms
/// to ``ChangeAnnouncing`` gets `objectWillChange.send()`; one that conforms to
/// ``TrackingOwner`` gets ``TrackingOwner/trackedVarDidChange(_:)``.
@propertyWrapper
public struct Tracked<Value: Sendable> {
    private let variable: Var<Value>
    private let observation = Locked<Subscription?>(nil)

    /// Tracks `wrappedValue`.
    public init(wrappedValue: Var<Value>) {
        variable = wrappedValue
    }

    /// The `Var`, read through its owner (see ``subscript(_enclosingInstance:wrapped:storage:)``).
    @available(*, unavailable, message: "@Tracked is for properties of classes")
    public var wrappedValue: Var<Value> {
        get { fatalError("@Tracked is for properties of classes") }
        set { fatalError("@Tracked is for properties of classes") }  // swiftlint:disable:this unused_setter_value
    }

    /// The `Var`; reading it through its owner starts announcing its changes to the owner.
    public static subscript<Owner: AnyObject>(
        _enclosingInstance owner: Owner,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Owner, Var<Value>>,
        storage storageKeyPath: ReferenceWritableKeyPath<Owner, Tracked<Value>>
    ) -> Var<Value> {
        get {
            let tracked = owner[keyPath: storageKeyPath]
            tracked.announce(to: owner, as: wrappedKeyPath)
            return tracked.variable
        }
        set {
            owner[keyPath: storageKeyPath] = Tracked(wrappedValue: newValue)
            owner[keyPath: storageKeyPath].announce(to: owner, as: wrappedKeyPath)
            TrackedChange.announce(TrackedChange(property: "\(wrappedKeyPath)", author: nil), to: owner)
        }
    }

    private func announce<Owner: AnyObject>(to owner: Owner, as keyPath: AnyKeyPath) {
        let property = "\(keyPath)"
        observation.withLock { observation in
            guard observation == nil else { return }
            let weakOwner = WeakOwner(owner)
            observation = variable.observe { update in
                guard let owner = weakOwner.object else { return }
                TrackedChange.announce(TrackedChange(property: property, author: update.author), to: owner)
            }
        }
    }
}

/// A change of a `@Tracked` `Var`: which property, and who made it.
public struct TrackedChange: Sendable, Hashable {
    /// The owner's property, as its key path prints (`\PersonModel.person`).
    public let property: String
    /// Who made the change (``Author/database`` for another process's).
    public let author: Author?

    static func announce(_ change: TrackedChange, to owner: AnyObject) {
        (owner as? any ChangeAnnouncing)?.objectWillChange.send()
        (owner as? any TrackingOwner)?.trackedVarDidChange(change)
    }
}

/// A class told about the changes of its `@Tracked` properties.
public protocol TrackingOwner: AnyObject {
    /// Called after a `@Tracked` `Var` of this object changed, on the changing thread.
    func trackedVarDidChange(_ change: TrackedChange)
}

/// A class that announces its changes through `objectWillChange`, `ObservableObject`-style, on
/// every platform (Combine's `ObservableObject` is not on Linux).
public protocol ChangeAnnouncing: AnyObject {
    /// Sent whenever a `@Tracked` property of the object changed.
    var objectWillChange: ChangeSignal { get }
}

/// A signal with subscribers: `send()` calls each of them.
public final class ChangeSignal: Sendable {
    private let subscribers = Locked<[Int: @Sendable () -> Void]>([:])
    private let next = Locked(0)

    /// A signal nobody listens to yet.
    public init() {}

    /// Calls every subscriber.
    public func send() {
        for subscriber in subscribers.withLock({ Array($0.values) }) { subscriber() }
    }

    /// Calls `handler` on every `send()` until the subscription ends.
    public func sink(_ handler: @escaping @Sendable () -> Void) -> Subscription {
        let id = next.withLock { value in
            value += 1
            return value
        }
        subscribers.withLock { $0[id] = handler }
        return Subscription { [subscribers] in subscribers.withLock { _ = $0.removeValue(forKey: id) } }
    }
}

/// A weak reference to an owner, for the observation that must not keep it alive.
private final class WeakOwner: @unchecked Sendable {  // only the weak reference, set once
    weak var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
}
