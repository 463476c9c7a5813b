import Foundation

/// Lets a handler run until the gate is closed — atomically with closing: once `close()`
/// returns, the handler is not running on any other thread and never starts again. A handler
/// may close its own gate from inside itself (it does not wait for itself).
@usableFromInline
final class HandlerGate: @unchecked Sendable {
    // @unchecked: `isClosed`, `running` and `closerWaits` are only touched while `condition` is locked.
    private let condition = NSCondition()
    private var isClosed = false
    /// The threads running the handler right now.
    private var running: [pthread_t] = []
    /// A `close()` waits for `running` to empty: leaving handlers must wake it.
    private var closerWaits = false

    /// Runs `body` unless the gate is closed.
    @usableFromInline func run(_ body: () -> Void) {
        let me = pthread_self()
        condition.lock()
        guard !isClosed else { return condition.unlock() }
        running.append(me)
        condition.unlock()
        body()
        condition.lock()
        if let index = running.firstIndex(where: { pthread_equal($0, me) != 0 }) { running.remove(at: index) }
        if closerWaits { condition.broadcast() }
        condition.unlock()
    }

    /// Closes the gate and waits until no other thread is inside it.
    func close() {
        let me = pthread_self()
        condition.lock()
        isClosed = true
        while running.contains(where: { pthread_equal($0, me) == 0 }) {
            closerWaits = true
            condition.wait()
        }
        condition.unlock()
    }
}
