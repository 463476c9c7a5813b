internal import CPostgres
import Foundation

/// Waits for libpq connections' results on one shared thread, so that no task blocks a thread
/// while the server works.
///
/// A connection sends its command without blocking (libpq's non-blocking mode) on the caller's
/// thread, then suspends here. The poller's thread sleeps in the kernel until a socket is ready,
/// reads what arrived (`PQflush`, `PQconsumeInput`) and resumes the statement's task once
/// `PQisBusy` says its result can be taken without waiting. A statement thus costs one wake-up
/// beyond what a blocking libpq call costs (the poller's, then the task's), where a connection
/// thread of its own costs two: onto that thread and back.
///
/// While a statement waits, its task is suspended and only this thread touches the connection;
/// the continuation hands it back.
///
/// It is also a `TaskExecutor` (``Database/executor``): a task that prefers it runs its jobs
/// on this thread between waits, so a statement's answer resumes it where it arrived, with no
/// wake-up of another thread.
final class SocketPoller: TaskExecutor {
    /// The poller every ``Connection`` uses.
    static let shared = SocketPoller()

    /// A connection handed to the poller for one wait: only the poller's thread uses it until
    /// the waiting task is resumed, which hands it back.
    struct Handed: @unchecked Sendable {  // exclusive hand-over: the owner is suspended meanwhile
        let pointer: OpaquePointer
    }

    private struct Waiter {
        let connection: Handed
        /// Whether libpq still holds output to send (`PQflush` returned 1).
        var flushing: Bool
        let continuation: CheckedContinuation<Void, Never>
    }

    private let readiness: any ReadinessSource
    private let waiters = Locked<[Int32: Waiter]>([:])
    /// Jobs of tasks that prefer this executor, run between waits.
    private let jobs = Locked<[UnownedJob]>([])
    /// Waits to end without an answer (see ``abandon(_:socket:)``).
    private let abandoned = Locked<[AbandonRequest]>([])
    /// The poller's thread, once it runs: jobs it enqueues itself need no wake-up.
    private let thread = Locked<pthread_t?>(nil)

    /// A poller on a thread of its own, waiting with `readiness` (epoll on Linux by default).
    init(readiness: any ReadinessSource = defaultReadinessSource()) {
        self.readiness = readiness
        let thread = Thread { [self] in run() }
        thread.name = "postgres socket poller"
        thread.start()
    }

    /// Returns once `pg`'s results can be read without blocking — the command's output sent and
    /// a result (or the connection's failure) arrived. Call it after a `PQsend…` on a
    /// non-blocking connection, and again whenever `PQisBusy` says more is to come.
    /// Runs on the caller's actor (the connection's): only the wait itself leaves it.
    func awaitResults(of pg: OpaquePointer, isolation: isolated (any Actor)? = #isolation) async {
        let socket = PQsocket(pg)
        guard socket >= 0 else { return }  // lost: libpq answers at once
        // The first step runs here: usually it sends the rest of the command and finds no result yet.
        var flushing = true
        guard case .wait(let forWriting) = Self.step(pg, flushing: &flushing) else { return }
        let connection = Handed(pointer: pg)
        await withCheckedContinuation { continuation in
            waiters.withLock { $0[socket] = Waiter(connection: connection, flushing: flushing, continuation: continuation) }
            if !readiness.arm(socket, forWriting: forWriting) { finish(socket) }
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        let isPollerThread = thread.withLock { $0.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
        if !isPollerThread { readiness.wake() }
    }

    private func run() {
        thread.withLock { $0 = pthread_self() }
        var ready: [Int32] = []
        var batch: [UnownedJob] = []
        while true {
            jobs.withLock { swap(&batch, &$0) }
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
            batch.removeAll(keepingCapacity: true)
            // Jobs that queued more jobs (a task yielding in a loop) must not starve the
            // sockets: look at them without blocking, then run the jobs again.
            readiness.wait(into: &ready, blocking: jobs.withLock { $0.isEmpty })
            for socket in ready { service(socket) }
            ready.removeAll(keepingCapacity: true)
            endAbandonedWaits()
        }
    }

    /// One readiness event: read and write what can be, then resume the waiting task or wait on.
    private func service(_ socket: Int32) {
        guard var waiter = waiters.withLock({ $0[socket] }) else { return }
        let next = Self.step(waiter.connection.pointer, flushing: &waiter.flushing)
        switch next {
        case .wait(let forWriting):
            waiters.withLock { $0[socket] = waiter }
            if !readiness.arm(socket, forWriting: forWriting) { finish(socket) }
        case .done:
            finish(socket)
        }
    }

    /// Ends the wait of `connection` on `socket` without an answer (its caller then gives the
    /// connection up), if it waits and `stillRunning` — asked on the poller's thread, which may
    /// be using the connection right now — says the statement is still the one to give up
    /// (while it is, the connection and its socket cannot have been closed and reused).
    func abandon(_ connection: Handed, socket: Int32, if stillRunning: @escaping @Sendable () -> Bool) {
        abandoned.withLock { $0.append(AbandonRequest(socket: socket, connection: connection, stillRunning: stillRunning)) }
        readiness.wake()
    }

    private struct AbandonRequest {
        let socket: Int32
        let connection: Handed
        let stillRunning: @Sendable () -> Bool
    }

    private func endAbandonedWaits() {
        let requests = abandoned.withLock { requests in
            defer { requests.removeAll() }
            return requests
        }
        for request in requests where request.stillRunning() {
            let waits = waiters.withLock { $0[request.socket]?.connection.pointer == request.connection.pointer }
            if waits { finish(request.socket) }
        }
    }

    /// Resumes the task waiting on `socket`: libpq now answers without blocking (with its
    /// result, or with the connection's failure).
    private func finish(_ socket: Int32) {
        waiters.withLock { $0.removeValue(forKey: socket) }?.continuation.resume()
    }

    enum Step: Equatable { case wait(forWriting: Bool), done }

    /// What libpq's non-blocking protocol asks for next: flush pending output (consuming input
    /// meanwhile, so the server is never stuck writing to us), then read until not busy.
    static func step(_ pg: OpaquePointer, flushing: inout Bool) -> Step {
        if flushing {
            switch PQflush(pg) {
            case 0: flushing = false
            case 1: return PQconsumeInput(pg) == 0 ? .done : .wait(forWriting: true)
            default: return .done  // failed: libpq reports it with the result
            }
        }
        if PQconsumeInput(pg) == 0 { return .done }
        // Over TLS, OpenSSL may hold the rest of a record (libpq reads 8 KB at a time) that the
        // socket will not signal again: read twice more before waiting, as libpq's own wait does.
        for _ in 0..<2 where PQisBusy(pg) != 0 && PQsslInUse(pg) != 0 {
            if PQconsumeInput(pg) == 0 { return .done }
        }
        return PQisBusy(pg) == 0 ? .done : .wait(forWriting: false)
    }
}
