import Foundation

/// Keeps a write to a closed socket from killing the process.
///
/// libpq sends its statements with `MSG_NOSIGNAL`, but `PQcancel` sends its request with a
/// plain `send`: when the server has already closed or reset the new socket (it stops, or
/// refuses more connections), the kernel raises `SIGPIPE` in the sending thread, and a
/// program that did not ignore `SIGPIPE` — most command-line tools — dies with status 141
/// and no message. This does what libpq does around its own sends: block `SIGPIPE` in this
/// thread while `body` runs, and take back a `SIGPIPE` that `body` raised, so that the write
/// fails with `EPIPE` instead.
enum BrokenPipeGuard {
    /// Runs `body` with `SIGPIPE` blocked in this thread; a `SIGPIPE` it raised is discarded.
    static func run<T>(_ body: () throws -> T) rethrows -> T {
        var brokenPipe = sigset_t()
        sigemptyset(&brokenPipe)
        sigaddset(&brokenPipe, SIGPIPE)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &brokenPipe, &previous)
        let pendingBefore = isPending()
        defer {
            if !pendingBefore && isPending() { takeBack(&brokenPipe) }
            pthread_sigmask(SIG_SETMASK, &previous, nil)
        }
        return try body()
    }

    /// Takes the pending `SIGPIPE` in `set` back, without waiting: it is pending.
    private static func takeBack(_ set: inout sigset_t) {
        #if canImport(Darwin)
        var taken: Int32 = 0
        _ = sigwait(&set, &taken)  // Darwin has no sigtimedwait; this returns at once, as libpq's does
        #else
        var none = timespec(tv_sec: 0, tv_nsec: 0)
        while sigtimedwait(&set, nil, &none) == -1 && errno == EINTR {}
        #endif
    }

    /// Whether a `SIGPIPE` waits for this thread (or the process).
    private static func isPending() -> Bool {
        var pending = sigset_t()
        sigpending(&pending)
        return sigismember(&pending, SIGPIPE) == 1
    }
}
