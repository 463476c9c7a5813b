/// Which aggregates a live query over aggregates holds: those whose root rows a live query over
/// the root table holds. That query is routed like any other over its table; the aggregate
/// query is told the ids that join or leave it, and reads its members from it.
///
/// An aggregate the root query holds but that could not be read (its root row gone at that
/// moment — deleted and inserted again, say — or the read failed) is *missing*: it is read
/// again when its row is next announced, and every aggregate is after an outage. For that, the
/// membership is registered with the repository's queries (``AnyLiveQuery``), following the
/// root table only while something is missing.
final class AggregateMembership<Root: Record & Equatable>: AnyLiveQuery, Sendable where Root.ID: Comparable {
    /// The live query over the root rows; held here, so it lives as long as the aggregate query.
    private let roots: LiveQueryStore<Root>
    private let key: TableKey
    let tableName: String
    private let state = Locked(State())

    private struct State {
        var subscription: Subscription?
        var missing: Set<Root.ID> = []
        /// Tells the aggregate query which ids to read again (nil: all).
        var tell: (@Sendable ([Root.ID]?) -> Void)?
    }

    init(_ roots: LiveQueryStore<Root>, table: RecordTable<Root>) {
        self.roots = roots
        key = table.key
        tableName = table.qualifiedName
    }

    deinit { state.withLock { $0.subscription }?.cancel() }

    /// The ids among `ids` whose root rows the root query holds now (all of them, in its order,
    /// for nil).
    func members(among ids: [Root.ID]?) -> [Root.ID] {
        let elements = roots.elements
        guard let ids else { return Array(elements.ids) }
        return ids.filter { elements[id: $0] != nil }
    }

    /// After the aggregates of `members` (the members among `ids`; nil: all) were read and
    /// those of `found` were there — or, with nil, the read failed: what is missing.
    func read(_ ids: [Root.ID]?, members: [Root.ID], found: [Root.ID]?) {
        let missing = Set(members).subtracting(found ?? [])
        state.withLock { state in
            if let ids { state.missing.subtract(ids) } else { state.missing.removeAll() }
            state.missing.formUnion(missing)
        }
    }

    /// Calls `tell` with the ids of root rows that join or leave the root query from now on,
    /// and of missing aggregates announced again (nil: read all again).
    func follow(_ tell: @escaping @Sendable ([Root.ID]?) -> Void) {
        let subscription = roots.handle().observe { update in
            let changes = update.changes()
            if !changes.inserted.isEmpty || !changes.removed.isEmpty { tell(changes.inserted + changes.removed) }
        }
        state.withLock { ($0.subscription, $0.tell) = (subscription, tell) }
    }

    // MARK: - AnyLiveQuery

    func follows(_ table: String) -> Bool {
        table == tableName && state.withLock { !$0.missing.isEmpty }
    }

    func changed(_ changes: [Change]) {
        let (announced, tell) = state.withLock { state in
            (changes.compactMap { key.id(from: $0.key, as: Root.ID.self) }.filter(state.missing.contains), state.tell)
        }
        if !announced.isEmpty { tell?(announced) }
    }

    func rerun() {
        state.withLock { $0.tell }?(nil)
    }
}
