public import IdentifiedCollections

extension Var {
    /// A reference to the property at `keyPath`; writes go back into this value.
    /// Its observers run only when that property changed (compared with `==` when `Equatable`
    /// — a value the same bit for bit, such as a NaN, is unchanged —, and the text inside a
    /// struct, an array or an optional by its Unicode scalars; inside a dictionary or a set,
    /// by `==` alone).
    ///
    /// Observers read the property from each new value, so a key path that can trap traps
    /// there, in the code that made the change: `\.tags[1]` once `tags` holds one element.
    /// For an element of a collection, use `self[\.tags][1]` (observers skip updates after
    /// which the position does not exist) or `[id:]`.
    @inlinable public subscript<Part>(keyPath: any WritableKeyPath<Value, Part> & Sendable) -> Var<Part> {
        let changed = changeTest(for: Part.self)
        let reader = PartReader(keyPath)
        return projected(keyPath as AnyKeyPath,
            read: reader.read,
            write: { value, body in body(&value[keyPath: keyPath]) },
            deliver: { update in Self.changedPart(update.map(reader.read), changed) })
    }

    /// The update, if the part it concerns changed (as `changed` tells) or it is the initial value.
    @inlinable static func changedPart<Part>(_ update: Update<Part>, _ test: any ChangeTest<Part>) -> Update<Part>? {
        update.isInitial || test.changed(update.old, update.new) ? update : nil
    }
}

extension Var where Value: MutableCollection & SendableMetatype, Value.Index: Sendable {
    /// A reference to the element at a *position*: after `removeFirst()`, `people[0]` is the
    /// element that moved into position 0. To follow one element, use `[id:]`.
    ///
    /// Reading or writing a position outside the collection traps, as for arrays. Observers
    /// skip updates after which the position does not exist; when it exists again, they are
    /// told of the element there now, from the one they last saw there (removing the last
    /// element and appending another is a change of that position).
    ///
    /// In an `IdentifiedArray`, an edit through it that gives the element another id is set as
    /// `array[index] = element` sets it: when another element has that id, the two trade places
    /// and the edited one replaces it; otherwise the edited one replaces the element at the
    /// position. (Edited in place, `IdentifiedArray` would trap; a live query refuses any change
    /// of its members' ids, and reports it.)
    @inlinable public subscript(index: Value.Index) -> Var<Value.Element> {
        guard Value.self is any KeyedByElementID.Type else { return position(index) { collection, body in body(&collection[index]) } }
        return position(index) { collection, body in
            var element = collection[index]
            body(&element)
            collection[index] = element
        }
    }

    /// A reference to the element at `index`, written by `write`.
    @inlinable func position(_ index: Value.Index, write: @escaping (inout Value, (inout Value.Element) -> Void) -> Void) -> Var<Value.Element> {
        let changed = changeTest(for: Value.Element.self)
        let find: (Value) -> Value.Element? = { $0.startIndex <= index && index < $0.endIndex ? $0[index] : nil }
        return projected((index as? any Hashable).map { AnyHashable($0) },
            read: { $0[index] },
            find: find,
            write: write,
            delivery: { current in
                // What this observer last saw at the position: from where it subscribed, then
                // from each update that had it. A leaf lock: nothing is taken while it is held.
                let lastSeen = Locked(find(current))
                return { update in
                    let new = update.new.indices.contains(index) ? update.new[index] : nil
                    let seen = lastSeen.withLock { last in
                        defer { if let new { last = new } }
                        return update.old.indices.contains(index) ? update.old[index] : last
                    }
                    guard let new, let seen else { return nil }
                    return Self.changedPart(Update(old: seen, new: new, author: update.author, isInitial: update.isInitial, sequence: update.sequence), changed)
                }
            })
    }
}

/// A collection whose elements' positions are kept by their ids (`IdentifiedArray`): an edit
/// in place that changes an element's id traps there, so a position's reference sets the edited
/// element as a whole instead.
@usableFromInline protocol KeyedByElementID {}

extension IdentifiedArray: KeyedByElementID {}

extension Var {
    /// A reference to the element with `id`, wherever it moves: nil once it is removed.
    /// Setting nil removes it; setting an element whose `id` is `id` replaces or appends it.
    /// Setting an element with another id removes the element with `id` and sets that element
    /// under its own id, replacing the one there or appending it (a live query refuses that
    /// change of membership and reports it, as any other).
    @inlinable public subscript<ID: Hashable & Sendable, Element>(id id: ID) -> Var<Element?> where Value == IdentifiedArray<ID, Element> {
        let changed = changeTest(for: Element?.self)
        return projected(AnyHashable(IDComponent(id: id)),
            read: { $0[id: id] },
            write: { array, body in
                var element = array[id: id]
                body(&element)
                guard let element, identity(of: element, as: ID.self) != id else { return array[id: id] = element }
                // Another id (or one that cannot be told: the element is not `Identifiable`).
                guard let index = array.index(id: id) else { return _ = array.updateOrAppend(element) }
                array.remove(at: index)
                _ = array.updateOrInsert(element, at: min(index, array.count))
            },
            deliver: { update in Self.changedPart(update.map { $0[id: id] }, changed) })
    }

    /// A reference to a property of an optional value, nil while the value is nil. Writes
    /// while the value is nil have nothing to write into and are dropped; so is writing nil
    /// into a property that is not optional. Writing nil into an optional property (this
    /// reference is then `Var<Part??>`, and `nil` is its outer nil) sets the property to nil.
    @inlinable public subscript<Wrapped, Part>(keyPath: any WritableKeyPath<Wrapped, Part> & Sendable) -> Var<Part?> where Value == Wrapped? {
        let changed = changeTest(for: Part?.self)
        let reader = PartReader(keyPath)
        return projected(keyPath as AnyKeyPath,
            read: { $0.map(reader.read) },
            write: { optional, body in
                var part = optional?[keyPath: keyPath]
                body(&part)
                guard optional != nil, let written = part ?? nilValue(of: Part.self) else { return }
                optional![keyPath: keyPath] = written
            },
            deliver: { update in Self.changedPart(update.map { $0.map(reader.read) }, changed) })
    }
}

/// `T`'s nil when `T` is optional (nil itself when it is not).
@usableFromInline func nilValue<T>(of _: T.Type) -> T? {
    (T.self as? any ExpressibleByNilLiteral.Type).flatMap { $0.init(nilLiteral: ()) as? T }
}

/// The id of an `Identifiable` element, as `ID`; nil for another element.
@usableFromInline func identity<Element, ID>(of element: Element, as _: ID.Type) -> ID? {
    (element as? any Identifiable)?.id as? ID
}

/// An id as a component of an observed part's path (apart from an index that equals it).
@usableFromInline struct IDComponent<ID: Hashable>: Hashable {
    @usableFromInline let id: ID
    @usableFromInline init(id: ID) { self.id = id }
}
