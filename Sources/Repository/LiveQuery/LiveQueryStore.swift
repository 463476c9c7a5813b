import IdentifiedCollections

/// The live query behind a `Var<IdentifiedArray<…>>`: its ``QueryState`` behind one lock, and
/// the loop that re-reads announced rows.
///
/// Element values are the member stores' values: an edit through `people[id: x]` is handed to
/// that row's store (which writes it through), and every change of a member store is mirrored
/// into the list and re-placed in order. Membership is the database's: after announcements,
/// the announced rows are read with the query's condition (or taken as the replication stream
/// carried them), and the list changes in one update.
@usableFromInline
final class LiveQueryStore<Element: Identifiable & Equatable & Sendable>: VarPersistence, @unchecked Sendable
where Element.ID: Comparable & Sendable {
    // @unchecked: all mutable state lives in `cell`, behind its lock.
    typealias Elements = IdentifiedArray<Element.ID, Element>

    let source: QuerySource<Element>
    private let report: @Sendable (LiveRecordError) -> Void
    @usableFromInline let cell: ObservedState<QueryState<Element>>
    /// Held across an edit of the list and the edits of its stores that follow, so that edits
    /// made through the query at once reach the stores in the order the list took them: the
    /// next one reads the list only after the stores took (and showed back) this one, or a
    /// store's older value shown back into the list would undo a later edit. Recursive: a
    /// handler the edit runs may edit the query again.
    ///
    /// Lock order: taken with no lock of this library held (only by a `Var` edit of the query);
    /// while it is held, the list's `cell` lock and then each member store's lock are taken
    /// and released, one at a time. Nothing takes it while holding either of those: a
    /// store's updates reach the list after the store's lock is released.
    @usableFromInline let editOrder = Lock(recursive: true)
    /// Who hands read rows to this query's member stores (see ``QueryHandOver``): the router
    /// its reads go through, which hands over for all its queries at once; nil: the query itself.
    private let router: (any AnyObject & Sendable)?
    /// Told this query's identifier when it goes away (its router forgets it at once, before
    /// the identifier can be reused).
    private let onRelease: (@Sendable (ObjectIdentifier) -> Void)?
    /// The repository the query belongs to, kept open by its handles (as ``StoreLease`` does).
    private let owner: (any AnyObject & Sendable)?

    init(source: QuerySource<Element>, order: QueryOrder<Element>, router: (any AnyObject & Sendable)? = nil,
         onRelease: (@Sendable (ObjectIdentifier) -> Void)? = nil, owner: (any AnyObject & Sendable)? = nil,
         report: @escaping @Sendable (LiveRecordError) -> Void) {
        self.source = source
        self.owner = owner
        self.report = report
        self.router = router
        self.onRelease = onRelease
        cell = ObservedState(QueryState(order: order))
    }

    deinit { onRelease?(ObjectIdentifier(self)) }

    /// The mark of the hand-overs whose updates this query's member observers are not sent.
    @usableFromInline var handingOver: AnyObject { router ?? self }

    @usableFromInline var state: LiveState { .live }

    /// A handle onto the list.
    func handle() -> Var<Elements> {
        Var(root: cell, modify: modify, persistence: self)
    }

    /// The list as it is now.
    var elements: Elements { cell.inspect { $0.elements } }
    /// The members as they are now, with their stores.
    @usableFromInline var members: [Element.ID: QueryState<Element>.Member] { cell.inspect { $0.members } }

    /// Waits for every member edited through the query (kept across calls: another task's
    /// `save()` must not take this one's edits away). Every member's edits are counted before
    /// it waits for any, so a failure while it waits for one member is thrown to it too.
    @usableFromInline func save() async throws {
        let stores = cell.inspect { state in state.edited.compactMap { state.members[$0]?.store } }
        let tickets = stores.map { ($0, $0.enrolSave()) }
        var firstError: (any Error)?
        for (store, ticket) in tickets {
            do { try await store.awaitSave(ticket) } catch { firstError = firstError ?? error }
        }
        if let firstError { throw firstError }
    }

    // MARK: - Membership

    /// Loads the whole result; called once before the first handle is returned. It takes the
    /// refresh loop's turn: changes asked for meanwhile wait, and are read after it, so that
    /// none is overtaken by it.
    func load() async throws {
        guard cell.transition({ (.none, $0.enqueue([])) }) else { return try await refresh(nil) }
        do {
            try await refresh(nil)
        } catch {
            Task { await refreshLoop() }  // the loop's turn ends: what waits is read
            throw error
        }
        await refreshLoop()
    }

    /// Rows with these ids changed: check whether they (still) match, and read their contents.
    func changed(_ ids: some Sequence<Element.ID>) {
        if cell.transition({ (.none, $0.enqueue(ids)) }) { Task { await refreshLoop() } }
    }

    /// Anything may have changed (the feed reconnected): run the whole query again.
    func rerun() {
        if cell.transition({ (.none, $0.enqueue([], rerun: true)) }) { Task { await refreshLoop() } }
    }

    /// One read at a time; announcements arriving meanwhile are read together next round.
    private func refreshLoop() async {
        while case let (ids, done) = cell.transition({ (.none, $0.nextRefresh()) }), !done {
            do {
                try await refresh(ids)
            } catch {
                report(.refreshFailed(table: source.shownTable, error))
            }
        }
    }

    /// Reads the rows with these ids (all matching rows when nil) and applies what was read:
    /// first the rows' contents to their stores (this query is not told of the updates that
    /// makes, see ``QueryHandOver``), then the list, in one update, from what the stores hold.
    func refresh(_ ids: [Element.ID]?) async throws {
        let (read, handOver) = try await source.read(ids)
        QueryHandOver.run(by: handingOver, handOver)
        apply(read)
    }

    /// Makes the list what `read` found, in one update, once its rows went to their stores
    /// (``refresh(_:)``, or the router that read them for many queries): each matching row as
    /// its store holds it now — the row read with the local edits made since on top, or a newer
    /// state the store already held (a write that committed meanwhile). A list showing an older
    /// value would give the next edit through it that value to start from, and the edit would
    /// set the field back. `value(i)` is the read's `i`th matching store's value (a router
    /// passes its stores' own, compiled for their type); nil: asked of the store.
    @inlinable func apply(_ read: QueryState<Element>.Read, value: ((Int) -> Element)? = nil) {
        var subscriptions: [Element.ID: Subscription] = [:]
        let members = self.members
        for (element, store) in read.matching where members[element.id]?.store !== store {
            subscriptions[element.id] = store.subscribe(member: ObjectIdentifier(handingOver)) { [weak self] update in
                self?.memberChanged(element.id, update)
            }
        }
        // A new member's store is observed before its value is taken below, so no change of it
        // is missed. Locks: `editOrder`, then this query's, then each member store's in turn —
        // the order `modify` and `membersChanged` take them in; none is held when this is called.
        let cancel = editOrder.withLock {
            cell.transition { state in
                var matching: [(element: Element, store: any MemberStore<Element>)] = []
                matching.reserveCapacity(read.matching.count)
                for (index, (_, store)) in read.matching.enumerated() {
                    matching.append((value?(index) ?? store.value, store))
                }
                let current = QueryState<Element>.Read(checked: read.checked, matching: matching, number: read.number)
                let (changed, cancel) = state.apply(current, subscriptions: subscriptions)
                return (changed ? .some(.database) : .none, cancel)
            }
        }
        for subscription in cancel { subscription.cancel() }
    }

    /// A member store changed: show its value as it is now — not the update's, which a newer
    /// read of the query may have overtaken while it was being delivered. Inside a batch of
    /// rows applied to stores (see ``MemberBatch``), with the batch's other members, after it.
    @usableFromInline func memberChanged(_ id: Element.ID, _ update: Update<Element>) {
        guard update.author != .deletion else { return }  // the query's own read removes it
        if MemberBatch.collect(id, author: update.author, of: self) { return }
        membersChanged([id], author: update.author)
    }

    // MARK: - Local edits

    /// An edit made through the query's `Var`: changed elements go to their stores; anything
    /// that adds, removes or moves elements is undone and reported, since only the database
    /// decides membership and the query's order decides positions.
    private func modify(author: Author?, _ body: (inout Elements) -> Void) {
        let restored = editOrder.withLock {
            let (changed, restored) = cell.transition { state in
                var new = state.elements
                body(&new)
                let result = state.edit(to: new)
                return (.some(author), result)
            }
            for (store, old, new) in changed {
                store.edit(from: old, to: new, author: author)
            }
            return restored
        }
        if restored { report(.membershipIsReadOnly(table: source.shownTable)) }
    }
}

extension LiveQueryStore: MemberBatchTarget {
    /// Shows what these member stores hold now, in one update.
    func membersChanged(_ ids: [Element.ID], author: Author?) {
        cell.transition { state in
            var changed = false
            for id in ids {
                guard let current = state.members[id]?.store.value else { continue }
                if state.memberChanged(id, to: current) { changed = true }
            }
            return (changed ? .some(author) : .none, ())
        }
    }
}
