internal import CPostgres
import Foundation

/// Lets another thread cancel the statement a connection is running (libpq's `PQcancel`),
/// and only that one.
///
/// A statement registers its ticket when it starts; cancelling a ticket marks it, and sends the
/// server a cancel request if that ticket's statement is running right then — from a thread of
/// its own, since `PQcancel` blocks. A connection that was sent a cancel request is not reused:
/// the request could otherwise reach the server late and cancel the next statement. A statement
/// still running ``giveUpAfter`` after its cancellation (a server that stopped answering) is
/// given up: the connection's `giveUp` ends its wait, and the connection is dropped.
final class StatementCanceller: @unchecked Sendable {
    // @unchecked: `handle`, `running` and `wasSent` are only touched under `lock`.
    /// One statement's claim to cancellation.
    final class Ticket: @unchecked Sendable {  // `isCancelled` is only touched under the canceller's lock
        fileprivate var isCancelled = false
    }

    /// Owns a `PGcancel`; freed once neither the connection nor a cancel in flight holds it.
    private final class Handle: @unchecked Sendable {  // PQcancel is thread-safe on its own object
        let pointer: OpaquePointer
        init(_ pointer: OpaquePointer) { self.pointer = pointer }
        deinit { PQfreeCancel(pointer) }
    }

    /// How long a cancelled statement may keep running before its wait is given up.
    static let giveUpAfter: Duration = .seconds(3)

    private let lock = Lock()
    private var handle: Handle?
    private var giveUp: GiveUp?

    /// Ends the wait of the connection's statement, if `stillRunning` (asked on the thread that
    /// ends it) says it is still the cancelled one.
    typealias GiveUp = @Sendable (_ stillRunning: @escaping @Sendable () -> Bool) -> Void
    private var running: Ticket?
    private var wasSent = false

    /// Prepares for connection `pg`; `giveUp` ends the wait of a statement that a cancel
    /// request did not stop.
    func attach(_ pg: OpaquePointer, giveUp: @escaping GiveUp) {
        let created = PQgetCancel(pg).map(Handle.init)
        lock.withLock {
            handle = created
            self.giveUp = giveUp
        }
    }

    /// The connection closed: nothing to cancel any more.
    func detach() {
        lock.withLock {
            handle = nil
            giveUp = nil
        }
    }

    /// Marks `ticket`'s statement as running; throws `CancellationError` if it was cancelled.
    func begin(_ ticket: Ticket) throws {
        try lock.withLock {
            if ticket.isCancelled { throw CancellationError() }
            running = ticket
        }
    }

    /// The statement ended. Returns whether it was cancelled, and whether a cancel request was
    /// sent (the connection must then not be reused).
    func end(_ ticket: Ticket) -> (cancelled: Bool, requestSent: Bool) {
        lock.withLock {
            if running === ticket { running = nil }
            return (ticket.isCancelled, wasSent)
        }
    }

    /// Cancels `ticket`: its statement will not start, or the server is asked to stop it —
    /// again and again while it runs, since a request that arrives before the statement does
    /// is ignored by the server.
    func cancel(_ ticket: Ticket) {
        let target = lock.withLock { () -> Handle? in
            ticket.isCancelled = true
            guard running === ticket, let handle else { return nil }
            wasSent = true
            return handle
        }
        guard let target else { return }
        Thread.detachNewThread { [self] in
            var pause: UInt32 = 20_000  // µs
            repeat {
                var message = [CChar](repeating: 0, count: 256)
                // Blocks while the server is unreachable; a server that closed the socket gives EPIPE.
                _ = BrokenPipeGuard.run { PQcancel(target.pointer, &message, Int32(message.count)) }
                usleep(pause)
                pause = min(pause * 2, 500_000)
            } while isRunning(ticket)
        }
        // Not on the thread above: a PQcancel there may hang (a silent network, a stopped server).
        scheduleGiveUp(ticket, after: Self.giveUpAfter)
    }

    /// After `delay`, ends the wait of `ticket`'s statement if it still runs — and again every
    /// half second while it does (it may be between two waits). A timer, not a thread.
    private func scheduleGiveUp(_ ticket: Ticket, after delay: Duration) {
        let (seconds, attoseconds) = delay.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [self] in
            guard let giveUp = lock.withLock({ running === ticket ? giveUp : nil }) else { return }
            giveUp { [self] in isRunning(ticket) }
            scheduleGiveUp(ticket, after: .milliseconds(500))
        }
    }

    private func isRunning(_ ticket: Ticket) -> Bool {
        lock.withLock { running === ticket }
    }
}
