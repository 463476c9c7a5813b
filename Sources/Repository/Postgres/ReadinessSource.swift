internal import CPostgres
import Foundation

/// Tells the ``SocketPoller`` which sockets are ready: each armed socket is reported once, then
/// must be armed again.
protocol ReadinessSource: Sendable {
    /// Reports `socket` once it is readable (or writable too, when `forWriting`), or failed.
    /// Returns false when the socket cannot be watched (it is closed): then nothing is reported.
    func arm(_ socket: Int32, forWriting: Bool) -> Bool
    /// Appends the armed sockets that are ready to `sockets`; when `blocking`, first waits
    /// until at least one is, or until ``wake()`` is called.
    func wait(into sockets: inout [Int32], blocking: Bool)
    /// Makes the current or next ``wait(into:)`` return (from any thread).
    func wake()
}

/// epoll where there is one (Linux), `poll(2)` elsewhere.
func defaultReadinessSource() -> any ReadinessSource {
    #if os(Linux)
    EpollReadiness()
    #else
    PollReadiness()
    #endif
}

#if os(Linux)
/// epoll with one-shot registrations: arming a socket is one system call and never wakes the
/// waiting thread.
final class EpollReadiness: ReadinessSource {
    private let epoll: Int32
    /// Registered for good (not one-shot): written to wake the waiting thread.
    private let wakeUp: Int32

    init() {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        precondition(epoll >= 0, "epoll_create1 failed: errno \(errno)")
        wakeUp = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        precondition(wakeUp >= 0, "eventfd failed: errno \(errno)")
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.fd = wakeUp
        precondition(epoll_ctl(epoll, EPOLL_CTL_ADD, wakeUp, &event) == 0, "epoll_ctl failed: errno \(errno)")
    }

    func wake() {
        _ = eventfd_write(wakeUp, 1)
    }

    func arm(_ socket: Int32, forWriting: Bool) -> Bool {
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | EPOLLONESHOT.rawValue | (forWriting ? EPOLLOUT.rawValue : 0)
        event.data.fd = socket
        // A socket already known (from an earlier statement) is re-armed; a new one is added.
        // Closing a socket removes it, so a number reused by a new connection is added again.
        return epoll_ctl(epoll, EPOLL_CTL_MOD, socket, &event) == 0 || epoll_ctl(epoll, EPOLL_CTL_ADD, socket, &event) == 0
    }

    func wait(into sockets: inout [Int32], blocking: Bool) {
        // On the stack: this runs for every answer.
        withUnsafeTemporaryAllocation(of: epoll_event.self, capacity: 64) { events in
            let count = epoll_wait(epoll, events.baseAddress, Int32(events.count), blocking ? -1 : 0)
            for event in events.prefix(max(0, Int(count))) {
                if event.data.fd == wakeUp {
                    var value: eventfd_t = 0
                    _ = eventfd_read(wakeUp, &value)
                } else {
                    sockets.append(event.data.fd)
                }
            }
        }
    }
}
#endif

/// `poll(2)` over the armed sockets plus a pipe that wakes the waiting thread when one is armed:
/// portable, at the price of a wake-up per arming.
final class PollReadiness: ReadinessSource {
    private let armed = Locked<[Int32: Int16]>([:])
    private let wakeRead: Int32
    private let wakeWrite: Int32

    init() {
        var ends: [Int32] = [0, 0]
        precondition(pipe(&ends) == 0, "pipe failed: errno \(errno)")
        (wakeRead, wakeWrite) = (ends[0], ends[1])
        // Neither end blocks: a full pipe already holds a wake-up.
        for end in [wakeRead, wakeWrite] { _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK) }
    }

    func arm(_ socket: Int32, forWriting: Bool) -> Bool {
        guard fcntl(socket, F_GETFD) != -1 else { return false }
        let events = Int16(POLLIN) | (forWriting ? Int16(POLLOUT) : 0)
        armed.withLock { $0[socket] = events }
        wake()
        return true
    }

    func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    func wait(into sockets: inout [Int32], blocking: Bool) {
        var descriptors = armed.withLock { $0.map { pollfd(fd: $0.key, events: $0.value, revents: 0) } }
        descriptors.append(pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0))
        guard poll(&descriptors, nfds_t(descriptors.count), blocking ? -1 : 0) > 0 else { return }
        var drain = [UInt8](repeating: 0, count: 64)
        while read(wakeRead, &drain, drain.count) > 0 {}
        let ready = descriptors.dropLast().filter { $0.revents != 0 }.map(\.fd)
        armed.withLock { armed in for socket in ready { armed[socket] = nil } }
        sockets.append(contentsOf: ready)
    }
}
