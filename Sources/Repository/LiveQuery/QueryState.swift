import IdentifiedCollections

/// A live query's state as a plain value: its members in order, with the live store each
/// element comes from, and the refreshes waiting to run.
///
/// Membership and the members' contents change in one transition (``apply(_:)``), from one
/// read: every list the query publishes is one some run of the query returned, overlaid with
/// this process's unsaved edits.
struct QueryState<Element: Identifiable & Equatable & Sendable>: ValueHolding where Element.ID: Comparable & Sendable {
    typealias Elements = IdentifiedArray<Element.ID, Element>

    struct Member {
        let store: any MemberStore<Element>
        let subscription: Subscription
    }

    /// What one read found: the matching rows among those it checked, as elements with their stores.
    struct Read {
        /// The ids it checked; nil when the query was run whole.
        let checked: [Element.ID]?
        let matching: [(element: Element, store: any MemberStore<Element>)]
    }

    let order: QueryOrder<Element>
    private(set) var elements: Elements
    private(set) var members: [Element.ID: Member] = [:]
    /// Ids announced since the last read, and whether the whole query must run again.
    private(set) var pending: Set<Element.ID> = []
    private(set) var mustRerun = false
    private(set) var isRefreshing = false
    /// Members edited through the query (while they are members).
    private(set) var edited: Set<Element.ID> = []

    var root: Elements { elements }

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
    mutating func apply(_ read: Read, subscriptions: [Element.ID: Subscription]) -> (changed: Bool, cancel: [Subscription]) {
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
        let checked = read.checked.map(Set.init) ?? Set(members.keys)
        var removals: Set<Element.ID> = []
        for id in checked where upserts[id] == nil {
            guard let member = members.removeValue(forKey: id) else { continue }
            edited.remove(id)
            cancel.append(member.subscription)
            removals.insert(id)
        }
        return (place(upserts, removing: removals), cancel)
    }

    /// A member's store changed: show its value. False when `id` is not a member (any more).
    mutating func memberChanged(_ id: Element.ID, to element: Element) -> Bool {
        guard members[id] != nil, elements[id: id] != element else { return false }
        return place([id: element], removing: [])
    }

    /// Shows what these member stores hold now, in one change; whether anything changed.
    /// Non-members are left out.
    mutating func mirror(_ stores: [(id: Element.ID, store: any MemberStore<Element>)]) -> Bool {
        var upserts: [Element.ID: Element] = [:]
        for (id, store) in stores where members[id]?.store === store {
            let value = store.value
            if elements[id: id] != value { upserts[id] = value }
        }
        return !upserts.isEmpty && place(upserts, removing: [])
    }

    /// An edit of the list made through the query's `Var`, to `new`: the members whose values
    /// changed (for their stores to write), and whether elements were added or removed —
    /// which only the database decides, so the list goes back to the members' values.
    mutating func edit(to new: Elements) -> (changed: [(store: any MemberStore<Element>, old: Element, new: Element)], membershipChanged: Bool) {
        var changed: [(store: any MemberStore<Element>, old: Element, new: Element)] = []
        var upserts: [Element.ID: Element] = [:]
        for element in new.elements {
            guard let member = members[element.id], let before = elements[id: element.id],
                  before != element else { continue }
            changed.append((member.store, before, element))
            upserts[element.id] = element
            edited.insert(element.id)
        }
        let membershipChanged = new.count != elements.count || new.ids.contains { members[$0] == nil }
        _ = place(upserts, removing: [])
        return (changed, membershipChanged)
    }

    // MARK: - Order

    /// Puts `upserts` where the order says and drops `removals`; whether anything changed.
    private mutating func place(_ upserts: [Element.ID: Element], removing removals: Set<Element.ID>) -> Bool {
        let changed = removals.contains { elements[id: $0] != nil } || upserts.contains { elements[id: $0.key] != $0.value }
        guard changed else { return false }
        if upserts.count + removals.count > 32 {
            placeMany(upserts, removing: removals)
        } else {
            for id in removals { elements.remove(id: id) }
            for element in upserts.values { placeOne(element) }
        }
        return true
    }

    /// Many changes at once, in about O(n + k log k) comparisons: replace in place, take out
    /// what left its place (and what is new), then merge those back in order.
    private mutating func placeMany(_ upserts: [Element.ID: Element], removing removals: Set<Element.ID>) {
        var kept = elements.elements
        var replaced: [Int] = []
        if !removals.isEmpty { kept.removeAll { removals.contains($0.id) } }
        var fresh = upserts
        for index in kept.indices {
            guard let element = fresh.removeValue(forKey: kept[index].id) else { continue }
            kept[index] = element
            replaced.append(index)
        }
        // A replaced element out of order with its neighbours moves; the rest stays sorted.
        var movers = Set<Int>()
        for index in replaced {
            let element = kept[index]
            if (index > 0 && !order.precedes(kept[index - 1], element)) || (index + 1 < kept.count && !order.precedes(element, kept[index + 1])) {
                movers.insert(index)
            }
        }
        var moving = Array(fresh.values) + movers.map { kept[$0] }
        if !movers.isEmpty { kept = kept.enumerated().filter { !movers.contains($0.offset) }.map(\.element) }
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

    private mutating func placeOne(_ element: Element) {
        if let index = elements.index(id: element.id) {
            let stays = (index == 0 || order.precedes(elements[index - 1], element))
                && (index == elements.count - 1 || order.precedes(element, elements[index + 1]))
            if stays { return elements[index] = element }
            elements.remove(at: index)
        }
        elements.insert(element, at: order.insertionIndex(of: element, in: elements.elements))
    }
}
