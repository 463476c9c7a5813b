public import Foundation

/// A pthread mutex. Used instead of `Synchronization.Mutex` for two reasons: `Mutex` only
/// hands values out as `sending`, which a `Var` of a non-`Sendable` value cannot satisfy; and
/// on Linux its futex-based implementation is invisible to ThreadSanitizer, which then
/// reports races between accesses the lock does order.
@usableFromInline
final class Lock: @unchecked Sendable {  // The pthread mutex is the synchronization itself.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// A lock; a `recursive` one may be taken again by the thread that holds it.
    init(recursive: Bool = false) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        guard recursive else {
            pthread_mutex_init(mutex, nil)
            return
        }
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inline(__always)
    @inlinable func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// A value that is only ever read or written under its own lock.
@usableFromInline
final class Locked<State>: @unchecked Sendable {  // `state` is only touched inside `lock`.
    @usableFromInline let lock = Lock()
    @usableFromInline var state: State

    @usableFromInline init(_ state: State) { self.state = state }

    @inlinable func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        try lock.withLock { try body(&state) }
    }
}
