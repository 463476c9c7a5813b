public import IdentifiedCollections
public import OrderedCollections

/// What one update of an identified collection did, by id: the elements that appeared, those
/// that left, and those whose value changed. A live query's observers use it to redraw only
/// what changed.
///
/// ```swift
/// people.observe { update in
///     let changes = update.changes()
///     print("inserted", changes.inserted, "removed", changes.removed, "updated", changes.updated)
/// }
/// ```
public struct CollectionChanges<ID: Hashable & Sendable>: Sendable, Hashable {
    /// Ids present after the update but not before, in their new order.
    public var inserted: [ID]
    /// Ids present before but not after, in their old order.
    public var removed: [ID]
    /// Ids present before and after whose element changed, in their new order.
    public var updated: [ID]

    /// Changes with these ids.
    public init(inserted: [ID] = [], removed: [ID] = [], updated: [ID] = []) {
        self.inserted = inserted
        self.removed = removed
        self.updated = updated
    }

    /// The changes from `old` to `new`. Records are compared as the database holds them: one
    /// that holds NaN where it did before is not updated.
    ///
    /// Inlinable, so that it runs specialized for the caller's types: an observer of a
    /// 10,000-row query computing this for each change spent most of its process's CPU on the
    /// generic code's metadata lookups.
    @inlinable public init<Element: Equatable>(from old: IdentifiedArray<ID, Element>, to new: IdentifiedArray<ID, Element>) {
        inserted = []
        updated = []
        removed = []
        if old.ids == new.ids {
            // The common case — values changed in place: compare by position, no hashing.
            let (before, after) = (old.elements, new.elements)
            for index in after.indices where ElementEquality.differs(before[index], after[index]) {
                updated.append(new.ids[index])
            }
            return
        }
        for (id, element) in zip(new.ids, new.elements) {
            if let before = old[id: id] {
                if ElementEquality.differs(before, element) { updated.append(id) }
            } else {
                inserted.append(id)
            }
        }
        removed = old.ids.filter { new[id: $0] == nil }
    }

    /// Whether nothing was inserted, removed or updated (the order may still have changed).
    public var isEmpty: Bool { inserted.isEmpty && removed.isEmpty && updated.isEmpty }
}

/// Encoded as `{"inserted": […], "removed": […], "updated": […]}`.
extension CollectionChanges: Codable where ID: Codable {}

extension Update {
    /// The ids this update inserted, removed and updated.
    @inlinable public func changes<ID: Hashable & Sendable, Element: Equatable>() -> CollectionChanges<ID> where Value == IdentifiedArray<ID, Element> {
        CollectionChanges(from: old, to: new)
    }
}
