public import IdentifiedCollections

/// A live query's state as a plain value: its members in order, with the live store each
/// element comes from, and the refreshes waiting to run.
///
/// Membership and the members' contents change in one transition (``apply(_:)``), from one
/// read: every list the query publishes is one some run of the query returned, overlaid with
/// this process's unsaved edits.
@usableFromInline
struct QueryState<Element: Identifiable & Equatable & Sendable>: ValueHolding where Element.ID: Comparable & Sendable {
    @usableFromInline typealias Elements = IdentifiedArray<Element.ID, Element>

    @usableFromInline struct Member {
        @usableFromInline let store: any MemberStore<Element>
        @usableFromInline let subscription: Subscription

        @usableFromInline init(store: any MemberStore<Element>, subscription: Subscription) {
            (self.store, self.subscription) = (store, subscription)
        }
    }

    /// What one read found: the matching rows among those it checked, as elements with their stores.
    @usableFromInline struct Read {
        /// The ids it checked; nil when the query was run whole.
        @usableFromInline let checked: [Element.ID]?
        @usableFromInline let matching: [(element: Element, store: any MemberStore<Element>)]
        /// The read's number (see ``ReadSequence``); nil when it has none.
        @usableFromInline var number: UInt64?

        @usableFromInline init(checked: [Element.ID]?, matching: [(element: Element, store: any MemberStore<Element>)], number: UInt64? = nil) {
            (self.checked, self.matching, self.number) = (checked, matching, number)
        }
    }

    @usableFromInline let order: QueryOrder<Element>
    @usableFromInline private(set) var elements: Elements
    @usableFromInline private(set) var members: [Element.ID: Member] = [:]
    /// Ids announced since the last read, and whether the whole query must run again.
    private(set) var pending: Set<Element.ID> = []
    private(set) var mustRerun = false
    private(set) var isRefreshing = false
    /// Members edited through the query (while they are members).
    @usableFromInline private(set) var edited: Set<Element.ID> = []

    @usableFromInline var root: Elements { elements }

    init(order: QueryOrder<Element>) {
        self.order = order
        elements = Elements(id: \.id)
    }

    /// More to read: these ids, or (`rerun`) everything. True when the caller must start the
    /// refresh loop.
    mutating func enqueue(_ ids: some Sequence<Element.ID>, rerun: Bool = false) -> Bool {
        pending.formUnion(ids)
        mustRerun = mustRerun || rerun
        defer { isRefreshing = true }
        return !isRefreshing
    }

    /// The refresh loop's next read: the ids to check, or nil for the whole query; `done`
    /// when there is nothing left (the loop ends).
    mutating func nextRefresh() -> (ids: [Element.ID]?, done: Bool) {
        guard mustRerun || !pending.isEmpty else {
            isRefreshing = false
            return (nil, true)
        }
        defer { pending.removeAll(); mustRerun = false }
        return (mustRerun ? nil : Array(pending), false)
    }

    /// Makes the checked rows' membership and contents what `read` found. `subscriptions`
    /// observe the stores of matching rows (made before, so no change is missed); the ones not
    /// needed, and those of members that left, are returned to be cancelled.
    @inlinable mutating func apply(_ read: Read, subscriptions: [Element.ID: Subscription]) -> (changed: Bool, cancel: [Subscription]) {
        var cancel: [Subscription] = []
        var upserts: [Element.ID: Element] = [:]
        for (element, store) in read.matching {
            upserts[element.id] = element
            if let existing = members[element.id], existing.store === store {
                subscriptions[element.id].map { cancel.append($0) }
            } else if let subscription = subscriptions[element.id] {
                members[element.id].map { cancel.append($0.subscription) }
                members[element.id] = Member(store: store, subscription: subscription)
            }
        }
        var removals: Set<Element.ID> = []
        for id in read.checked ?? Array(members.keys) where upserts[id] == nil {
            guard let member = members.removeValue(forKey: id) else { continue }
            edited.remove(id)
            cancel.append(member.subscription)
            removals.insert(id)
        }
        return (place(upserts, removing: removals), cancel)
    }

    /// A member's store changed: show its value. False when `id` is not a member (any more).
    mutating func memberChanged(_ id: Element.ID, to element: Element) -> Bool {
        guard members[id] != nil, elements[id: id].map({ ElementEquality.differs($0, element) }) ?? true else { return false }
        return place([id: element], removing: [])
    }

    /// An edit of the list made through the query's `Var`, to `new`: the members whose values
    /// changed (for their stores to write), and whether the edit was undone in part — elements
    /// added or removed, or moved where the query's order does not put them: membership and
    /// order are the database's, so the list goes back to the members' values in query order.
    mutating func edit(to new: Elements) -> (changed: [(store: any MemberStore<Element>, old: Element, new: Element)], restored: Bool) {
        var changed: [(store: any MemberStore<Element>, old: Element, new: Element)] = []
        var upserts: [Element.ID: Element] = [:]
        for element in new.elements {
            guard let member = members[element.id], let before = elements[id: element.id],
                  ElementEquality.differs(before, element) else { continue }
            changed.append((member.store, before, element))
            upserts[element.id] = element
            edited.insert(element.id)
        }
        let membershipChanged = new.count != elements.count || new.ids.contains { members[$0] == nil }
        let moved = !membershipChanged && new.ids != elements.ids
        _ = place(upserts, removing: [])
        // A move is undone only where the order puts the elements elsewhere: an edit of a sort
        // key moves its element, and the list follows the order, not the edit's positions.
        return (changed, membershipChanged || (moved && new.ids != elements.ids))
    }

    // MARK: - Order

    /// Puts `upserts` where the order says and drops `removals`; whether anything changed.
    @inlinable mutating func place(_ upserts: [Element.ID: Element], removing removals: Set<Element.ID>) -> Bool {
        let changed = removals.contains { elements[id: $0] != nil } || upserts.contains { id, new in elements[id: id].map { ElementEquality.differs($0, new) } ?? true }
        guard changed else { return false }
        if upserts.count + removals.count > 32 {
            placeMany(upserts, removing: removals)
        } else {
            for id in removals { elements.remove(id: id) }
            for element in upserts.values { placeOne(element) }
        }
        return true
    }

    /// Many changes at once, in about O(n + k log k) comparisons: members replaced in place;
    /// when some then stand out of order (or rows join or leave), those that stand out are
    /// taken out with the new ones and merged back in order.
    @inlinable mutating func placeMany(_ upserts: [Element.ID: Element], removing removals: Set<Element.ID>) {
        var fresh: [Element] = []
        var replaced: [Int] = []
        replaced.reserveCapacity(upserts.count)
        for (id, element) in upserts {
            guard let index = elements.index(id: id) else {
                fresh.append(element)
                continue
            }
            Self.assign(&elements[index], element)
            replaced.append(index)
        }
        // If every pair of neighbours with a replaced element in it is in order, the whole list
        // is (the untouched pairs already were); each pair is compared once. The usual bulk
        // update ends here, with the list's id index untouched.
        replaced.sort()
        let outOfOrder = replaced.indices.contains { position in
            let index = replaced[position]
            let leftPairChecked = position > 0 && replaced[position - 1] == index - 1
            return (index > 0 && !leftPairChecked && !order.precedes(elements[index - 1], elements[index]))
                || (index + 1 < elements.count && !order.precedes(elements[index], elements[index + 1]))
        }
        guard outOfOrder || !fresh.isEmpty || !removals.isEmpty else { return }
        // Untouched elements are still sorted among themselves: keep them, and each replaced
        // one that fits between its kept neighbours; merge the others back in, in order.
        var kept: [Element] = [], moving = fresh
        kept.reserveCapacity(elements.count)
        for element in elements.elements where !removals.contains(element.id) {
            if upserts[element.id] == nil {
                while let last = kept.last, !order.precedes(last, element) { moving.append(kept.removeLast()) }
                kept.append(element)
            } else if kept.last.map({ order.precedes($0, element) }) ?? true {
                kept.append(element)
            } else {
                moving.append(element)
            }
        }
        moving.sort(by: order.precedes)
        var merged: [Element] = []
        merged.reserveCapacity(kept.count + moving.count)
        var (left, right) = (0, 0)
        while left < kept.count || right < moving.count {
            if right == moving.count || (left < kept.count && order.precedes(kept[left], moving[right])) {
                merged.append(kept[left])
                left += 1
            } else {
                merged.append(moving[right])
                right += 1
            }
        }
        elements = Elements(uniqueElements: merged, id: \.id)
    }

    /// `target = value` through a mutable access: an identified array's element is replaced in
    /// place (its id stays), where assigning through its subscript's setter would look it up again.
    @inlinable static func assign(_ target: inout Element, _ value: Element) { target = value }

    @inlinable mutating func placeOne(_ element: Element) {
        if let index = elements.index(id: element.id) {
            let stays = (index == 0 || order.precedes(elements[index - 1], element))
                && (index == elements.count - 1 || order.precedes(element, elements[index + 1]))
            if stays { return elements[index] = element }
            elements.remove(at: index)
        }
        elements.insert(element, at: order.insertionIndex(of: element, in: elements.elements))
    }
}
