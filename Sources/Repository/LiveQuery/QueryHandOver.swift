import Foundation

/// The live query handing a read's rows to their stores on the current thread (see
/// ``LiveQueryStore``): the updates those reads make are not sent to that query's member
/// observers (``ObserverList/publish(_:handingOver:)``) — the list's update after the
/// hand-over shows what the stores made of them, in one update. Updates other threads
/// make meanwhile still reach the query. A thread's mark, not a task's: a task started
/// meanwhile (a store's write loop) must not inherit it, and the hand-over never suspends, so
/// nothing else runs on the thread while the mark is set.
@usableFromInline enum QueryHandOver {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "no thread-specific key left")
        return key
    }()

    /// Runs `handOver` with the thread marked as `query`'s.
    @usableFromInline static func run(by query: AnyObject, _ handOver: () -> Void) {
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, Unmanaged.passUnretained(query).toOpaque())
        defer { pthread_setspecific(key, previous) }
        handOver()
    }

    /// The query whose hand-over the current thread runs (see ``Observer/member``).
    @usableFromInline static var current: ObjectIdentifier? {
        // The query is alive: the thread is inside its `run(by:_:)`.
        pthread_getspecific(key).map { ObjectIdentifier(Unmanaged<AnyObject>.fromOpaque($0).takeUnretainedValue()) }
    }
}
