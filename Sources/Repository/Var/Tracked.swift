/// A property wrapper for a `Var` held by a class: every change of the `Var` — a local edit, or
/// for a live handle a change made by another process — is announced to the class that holds
/// it, the way `@Published` announces through `objectWillChange`.
///
/// ```swift
/// @Observable final class PersonModel: TrackingOwner {
///     @ObservationIgnored @Tracked var person: Var<Person>
///     var changes = 0                                   // observed by the UI
///     init(_ person: Var<Person>) {
///         _person = Tracked(wrappedValue: person)
///         startTracking()                               // announce from now on
///     }
///     func trackedVarDidChange(_ change: TrackedChange) { changes += 1 }
/// }
/// ```
///
/// A wrapper learns its owner when the owner calls ``TrackedPropertyOwner/startTracking()``
/// (at the end of its initializer, as above) or, failing that, when the property is first read
/// through the owner; changes made before either are not announced. Changes are announced on
/// the changing thread; the observation ends with the owner. An owner that conforms to
/// ``ChangeAnnouncing`` gets `objectWillChange.send()`; one that conforms to ``TrackingOwner``
/// gets ``TrackingOwner/trackedVarDidChange(_:)``.
@propertyWrapper
public struct Tracked<Value: Sendable>: TrackedStorage {
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
            tracked.announce(to: owner)
            return tracked.variable
        }
        set {
            owner[keyPath: storageKeyPath] = Tracked(wrappedValue: newValue)
            let tracked = owner[keyPath: storageKeyPath]
            tracked.announce(to: owner)
            TrackedChange.announce(TrackedChange(property: tracked.name(in: owner), author: nil), to: owner)
        }
    }

    /// Starts announcing this wrapper's changes to `owner`, unless it already does.
    func announce(to owner: AnyObject) {
        guard observation.withLock({ $0 == nil }) else { return }
        let property = name(in: owner)
        observation.withLock { observation in
            guard observation == nil else { return }
            let weakOwner = WeakOwner(owner)
            observation = variable.observe { update in
                guard let owner = weakOwner.object else { return }
                TrackedChange.announce(TrackedChange(property: property, author: update.author), to: owner)
            }
        }
    }

    /// The property of `owner` this wrapper stores, as `\Owner.name` (found by reflection: on
    /// Linux a key path does not print its property's name).
    func name(in owner: AnyObject) -> String {
        var mirror: Mirror? = Mirror(reflecting: owner)
        while let current = mirror {
            for child in current.children {
                guard let label = child.label, let other = child.value as? Self, other.observation === observation else { continue }
                return "\\\(type(of: owner)).\(label.hasPrefix("_") ? String(label.dropFirst()) : label)"
            }
            mirror = current.superclassMirror
        }
        return "\\\(type(of: owner)).\(Value.self)"
    }
}

/// A change of a `@Tracked` `Var`: which property, and who made it.
public struct TrackedChange: Sendable, Hashable {
    /// The owner's property, as `\PersonModel.person` (its stored name, on every platform).
    public let property: String
    /// Who made the change (``Author/database`` for another process's).
    public let author: Author?

    static func announce(_ change: TrackedChange, to owner: AnyObject) {
        (owner as? any ChangeAnnouncing)?.objectWillChange.send()
        (owner as? any TrackingOwner)?.trackedVarDidChange(change)
    }
}

/// A class holding `@Tracked` properties (a ``TrackingOwner`` or a ``ChangeAnnouncing`` one).
public protocol TrackedPropertyOwner: AnyObject {}

extension TrackedPropertyOwner {
    /// Starts announcing the changes of every `@Tracked` property of this object (its class's
    /// and its superclasses'): call it at the end of the initializer, so that a change made
    /// before the property is first read — another process changing a live handle — is
    /// announced too. Calling it again, or reading the properties, starts nothing twice.
    public func startTracking() {
        var mirror: Mirror? = Mirror(reflecting: self)
        while let current = mirror {
            for child in current.children {
                (child.value as? any TrackedStorage)?.announce(to: self)
            }
            mirror = current.superclassMirror
        }
    }
}

/// What ``TrackedPropertyOwner/startTracking()`` finds among an owner's stored properties.
protocol TrackedStorage {
    func announce(to owner: AnyObject)
}

/// A class told about the changes of its `@Tracked` properties.
public protocol TrackingOwner: TrackedPropertyOwner {
    /// Called after a `@Tracked` `Var` of this object changed, on the changing thread.
    func trackedVarDidChange(_ change: TrackedChange)
}

/// A class that announces its changes through `objectWillChange`, `ObservableObject`-style, on
/// every platform (Combine's `ObservableObject` is not on Linux).
public protocol ChangeAnnouncing: TrackedPropertyOwner {
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
