/// What handles and live queries hold of a live store: the identity map keeps a store for as
/// long as its lease is held.
///
/// The map refers to the lease weakly, never to the store. An object referred to weakly gets a
/// side table, through which every later retain and release of it goes — and a store is
/// retained and released many times for each change it applies (a burst of 10,000 changed
/// rows took about a tenth more CPU time so; issue 30). A lease is retained only when a handle
/// or a query's member is made.
///
/// A store whose write is under way keeps its lease (see ``LiveStore/attach(_:)``), so a read
/// meanwhile finds it, with the edit, even once every handle onto it is gone.
///
/// A lease keeps its repository: a handle follows changes for as long as it is held, whether
/// or not the program still holds the repository (whose release would close it).
@usableFromInline
final class StoreLease<Table: LiveTable>: Sendable {
    @usableFromInline let store: LiveStore<Table>
    /// The repository the store belongs to, kept open by its handles.
    private let owner: (any AnyObject & Sendable)?

    /// The lease of a store just made (the store refers back to it weakly), which keeps `owner`.
    init(_ store: LiveStore<Table>, owner: (any AnyObject & Sendable)? = nil) {
        self.store = store
        self.owner = owner
        store.attach(self)
    }

    @usableFromInline var id: Table.ID { store.id }

    /// A new handle onto the shared value; it holds this lease.
    @inlinable func handle() -> Var<Table.Content.Value> { store.handle(holding: self) }
}

extension StoreLease: MemberStore {
    @usableFromInline var value: Table.Content.Value { store.value }
    @usableFromInline var state: LiveState { store.state }
    @usableFromInline var committedVersion: CommittedVersion? { store.committedVersion }

    @usableFromInline func save() async throws { try await store.save() }

    @usableFromInline func subscribe(member query: ObjectIdentifier, _ handler: @escaping @Sendable (Update<Table.Content.Value>) -> Void) -> Subscription {
        store.subscribe(member: query, handler)
    }

    @usableFromInline func edit(from old: Table.Content.Value, to new: Table.Content.Value, author: Author?) {
        store.edit(from: old, to: new, author: author)
    }

    @usableFromInline func enrolSave() -> Int { store.enrolSave() }

    @usableFromInline func awaitSave(_ ticket: Int) async throws { try await store.awaitSave(ticket) }
}

/// A lease, whatever its store's type: what the identity map holds (weakly).
protocol AnyStoreLease: AnyObject, Sendable {
    var anyStore: any AnyLiveStore { get }
}

extension StoreLease: AnyStoreLease {
    var anyStore: any AnyLiveStore { store }
}
