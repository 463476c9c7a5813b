import Foundation

/// Rows applied to many stores at once — one read's, one stream batch's — reach the live
/// queries holding those stores together: while ``run(_:)`` runs on a thread, a member store's
/// update delivered on that thread is not shown in its query's list at once but collected, and
/// each query shows all of its collected members in **one** list update when the batch ends.
/// A 300-row statement re-read through stores of their own (an aggregate's) is one list
/// update, as it is for queries whose router reads the rows (see ``QueryHandOver``).
///
/// A thread's mark, like ``QueryHandOver``'s: the batch never suspends, and an update another
/// thread delivers meanwhile reaches its query at once, as without a batch. Deferring is safe
/// because a query shows what its member stores hold when it is told, not the update's value.
@usableFromInline enum MemberBatch {
    /// What one batch collected for its queries, in the order they were first concerned.
    private final class Collected {
        var flushes: [ObjectIdentifier: any Flushing] = [:]
        var order: [ObjectIdentifier] = []
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "no thread-specific key left")
        return key
    }()

    /// Runs `body` as one batch (inside another batch: as part of it), then tells each query
    /// concerned of its members that changed, once.
    @usableFromInline static func run<T>(_ body: () throws -> T) rethrows -> T {
        guard pthread_getspecific(key) == nil else { return try body() }
        let collected = Collected()
        let retained = Unmanaged.passRetained(collected)
        pthread_setspecific(key, retained.toOpaque())
        defer {
            pthread_setspecific(key, nil)
            // Outside the mark (what the queries' observers do is not part of the batch), and
            // also when `body` throws: what it applied is shown.
            for query in collected.order { collected.flushes[query]?.flush() }
            retained.release()
        }
        return try body()
    }

    /// Collects member `id` of `query` for the batch running on this thread: false when none
    /// runs (the caller shows the member now).
    static func collect<Query: MemberBatchTarget>(_ id: Query.MemberID, author: Author?, of query: Query) -> Bool {
        guard let opaque = pthread_getspecific(key) else { return false }
        let collected = Unmanaged<Collected>.fromOpaque(opaque).takeUnretainedValue()
        let key = ObjectIdentifier(query)
        if let pending = collected.flushes[key] as? Pending<Query> {
            pending.ids.append(id)
            pending.author = author
        } else {
            collected.flushes[key] = Pending(query: query, id: id, author: author)
            collected.order.append(key)
        }
        return true
    }

    private protocol Flushing: AnyObject {
        func flush()
    }

    private final class Pending<Query: MemberBatchTarget>: Flushing {
        let query: Query
        var ids: [Query.MemberID]
        var author: Author?

        init(query: Query, id: Query.MemberID, author: Author?) {
            (self.query, self.ids, self.author) = (query, [id], author)
        }

        func flush() { query.membersChanged(ids, author: author) }
    }
}

/// A live query that shows its members' updates together (see ``MemberBatch``).
protocol MemberBatchTarget: AnyObject {
    associatedtype MemberID
    /// These members' stores changed (the last update's author given): show what they hold now, in one update.
    func membersChanged(_ ids: [MemberID], author: Author?)
}
