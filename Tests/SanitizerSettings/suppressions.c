// ThreadSanitizer reads this when the test bundle runs with `swift test --sanitize=thread`.
//
// swift-subprocess (which LocalServer runs initdb and pg_ctl through) keeps its process monitor
// behind `Synchronization.Mutex`. On Linux that mutex is a futex the uninstrumented standard
// library takes, so ThreadSanitizer cannot see it order anything and reports races between
// accesses it does order (every reported pair is inside the same `withLock`). The library's own
// locks are pthread mutexes, which ThreadSanitizer understands; nothing of ours is suppressed.
const char *__tsan_default_suppressions(void) {
    return "race:swift-subprocess/Sources/Subprocess/\n";
}
