import IdentifiedCollections

/// The state behind a live query's `Var`: its elements in order, the live stores they come
/// from, and the re-reads that keep membership equal to re-running the query.
///
/// Element values are the member stores' values: an edit through `people[id: x]` is handed to
/// that row's store (which writes it through), and every change of a member store — local or
/// remote — is mirrored into the array and re-placed in order. Membership is the database's:
/// after a change announcement only the announced ids are checked against the query, unless
/// the batch is large, or the feed reconnected, and the query is re-run instead.
final class LiveQueryStore<Element: Identifiable & Equatable & Sendable>: VarPersistence, @unchecked Sendable
where Element.ID: Comparable & Sendable {
    // @unchecked: the `var`s below are read and written only under `lock`. Lock order: this
    // lock, then a store's; handlers run outside both.
    typealias Elements = IdentifiedArray<Element.ID, Element>

    private struct Member {
        let store: any MemberStore<Element>
        let subscription: Subscription
    }

    let value = VarStore(Elements(id: \.id))
    let source: QuerySource<Element>
    private let order: QueryOrder<Element>
    private let report: @Sendable (LiveRecordError) -> Void
    private let lock = Lock()
    private var members: [Element.ID: Member] = [:]
    private var pending: Set<Element.ID> = []
    private var mustRerun = false
    private var isRefreshing = false
    /// Members edited through this query since the last `save()`.
    private var edited: Set<Element.ID> = []
    private var subscription: Subscription?

    /// Batches larger than this re-run the query rather than checking ids one by one.
    static var perRowLimit: Int { 1000 }

    init(source: QuerySource<Element>, order: QueryOrder<Element>, report: @escaping @Sendable (LiveRecordError) -> Void) {
        self.source = source
        self.order = order
        self.report = report
        subscription = value.subscribe(initial: false) { [weak self] update in self?.localChange(update) }
    }

    var state: LiveState { .live }

    func save() async throws {
        let stores = lock.withLock {
            defer { edited.removeAll() }
            return edited.compactMap { members[$0]?.store }
        }
        var firstError: (any Error)?
        for store in stores {
            do { try await store.save() } catch { firstError = firstError ?? error }
        }
        if let firstError { throw firstError }
    }

    // MARK: - Membership

    /// Loads the whole result; called once before the first handle is returned.
    func load() async throws {
        try await apply(source.matchingIDs(nil), checked: nil)
    }

    /// Rows with these ids changed: check whether they (still) match.
    func changed(_ ids: some Sequence<Element.ID>) {
        enqueue { $0.pending.formUnion(ids) }
    }

    /// Anything may have changed (the feed reconnected): re-run the query.
    func rerun() {
        enqueue { $0.mustRerun = true }
    }

    private func enqueue(_ change: (LiveQueryStore) -> Void) {
        let start = lock.withLock {
            change(self)
            defer { isRefreshing = true }
            return !isRefreshing
        }
        guard start else { return }
        Task { await refreshLoop() }
    }

    /// One refresh at a time; announcements arriving meanwhile are checked together next round.
    private func refreshLoop() async {
        while let (ids, rerun) = lock.withLock({ () -> ([Element.ID], Bool)? in
            guard mustRerun || !pending.isEmpty else { isRefreshing = false; return nil }
            defer { pending.removeAll(); mustRerun = false }
            return (Array(pending), mustRerun || pending.count > Self.perRowLimit)
        }) {
            do {
                if rerun {
                    try await apply(source.matchingIDs(nil), checked: nil)
                } else {
                    try await apply(source.matchingIDs(ids), checked: ids)
                }
            } catch {
                report(.refreshFailed(table: source.table, error))
            }
        }
    }

    /// Makes the members `matching` among `checked` (or among all rows when nil).
    private func apply(_ matching: [Element.ID], checked: [Element.ID]?) async throws {
        let matches = Set(matching)
        let (entering, leaving) = lock.withLock { () -> ([Element.ID], [Element.ID]) in
            let candidates = checked.map(Set.init) ?? Set(members.keys)
            return (matching.filter { members[$0] == nil }, candidates.filter { members[$0] != nil && !matches.contains($0) })
        }
        let stores = entering.isEmpty ? [] : try await source.stores(entering)
        let dropped = lock.withLock { leaving.compactMap { members.removeValue(forKey: $0) } }
        for member in dropped { member.subscription.cancel() }
        for store in stores { admit(store) }
        guard !leaving.isEmpty else { return }
        value.modifyIfChanged(author: .database) { elements in
            let before = elements.count
            for id in leaving { elements.remove(id: id) }
            return elements.count != before
        }
    }

    /// Adds a member: observe its store first, so no change is missed, then place its value.
    private func admit(_ store: any MemberStore<Element>) {
        let id = store.value.read().id
        let subscription = store.value.subscribe(initial: false) { [weak self] update in
            self?.memberChanged(id, update)
        }
        let isNew = lock.withLock { () -> Bool in
            guard members[id] == nil else { return false }
            members[id] = Member(store: store, subscription: subscription)
            return true
        }
        guard isNew else { return subscription.cancel() }
        place(store.value.read(), author: .database)
    }

    /// A member store changed: mirror it, or drop the element if its row was deleted.
    private func memberChanged(_ id: Element.ID, _ update: Update<Element>) {
        guard update.author != .deletion else {
            lock.withLock { members.removeValue(forKey: id) }?.subscription.cancel()
            return value.modifyIfChanged(author: .deletion) { $0.remove(id: id) != nil }
        }
        guard lock.withLock({ members[id] != nil }) else { return }
        place(update.new, author: update.author)
    }

    /// Puts `element` where the order says, replacing its old value.
    private func place(_ element: Element, author: Author?) {
        value.modifyIfChanged(author: author) { elements in
            if let index = elements.index(id: element.id) {
                // An edit made through the query may already be in place but out of order.
                let stays = (index == 0 || order.precedes(elements[index - 1], element))
                    && (index == elements.count - 1 || order.precedes(element, elements[index + 1]))
                if stays {
                    guard elements[index] != element else { return false }
                    elements[index] = element
                    return true
                }
                elements.remove(at: index)
            }
            elements.insert(element, at: order.insertionIndex(of: element, in: elements.elements))
            return true
        }
    }

    // MARK: - Local edits

    /// An edit made through the query's `Var`: hand changed elements to their stores; undo
    /// anything that adds, removes or moves elements, which only the database decides.
    private func localChange(_ update: Update<Elements>) {
        guard update.author != .database, update.author != .revert, update.author != .deletion else { return }
        let (old, new) = (update.old, update.new)
        let sameShape = old.ids == new.ids
        var changed: [Element] = []
        for element in new.elements {
            if let before = old[id: element.id], before != element { changed.append(element) }
        }
        let stores = lock.withLock {
            changed.compactMap { element in
                members[element.id].map { member in
                    edited.insert(element.id)
                    return (member.store, element)
                }
            }
        }
        for (store, element) in stores {
            store.value.modifyIfChanged(author: update.author) { current in
                guard current != element else { return false }
                current = element
                return true
            }
        }
        guard !sameShape else { return }
        restoreMembership()
        report(.membershipIsReadOnly(table: source.table))
    }

    /// The elements as the member stores hold them, in order.
    private func restoreMembership() {
        let stores = lock.withLock { members.values.map(\.store) }
        let sorted = stores.map { $0.value.read() }.sorted(by: order.precedes)
        value.modifyIfChanged(author: .revert) { elements in
            let canonical = Elements(uniqueElements: sorted, id: \.id)
            guard elements != canonical else { return false }
            elements = canonical
            return true
        }
    }
}
