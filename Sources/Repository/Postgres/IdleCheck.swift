internal import CPostgres
import Foundation
import Synchronization

/// Tells, without a round trip, whether the server has ended an idle connection.
///
/// The server sends nothing on an idle connection until it ends it: then a `FATAL` error
/// (`pg_terminate_backend`, a shutdown, `idle_session_timeout`) and the close. So anything
/// readable on the socket means the end — libpq would still call the connection open between
/// the two, which is why this does not ask libpq. (A `NOTIFY` for a pooled connection that
/// listens is readable too: it costs a reconnect, no more.) A `FATAL` that arrived with the
/// last statement's answer was already read by libpq, which hands it to the notice receiver
/// installed here: it is remembered.
///
/// Touches no libpq state when checking, so any thread may check while the connection is idle.
final class IdleCheck: Sendable {
    /// The connection's socket (tests look at what it has sent).
    let socket: Int32
    private let farewellReceived = Atomic<Bool>(false)

    /// Watches `pg`, whose owner keeps this object alive for as long as `pg` is open.
    init(_ pg: OpaquePointer) {
        socket = PQsocket(pg)
        // Also keeps notices (RAISE NOTICE) off stderr: this receiver replaces the one that prints.
        PQsetNoticeReceiver(pg, { context, result in
            guard let context, let result,
                  let severity = PQresultErrorField(result, Int32(Character("V").asciiValue!)),
                  ["FATAL", "PANIC"].contains(String(cString: severity))
            else { return }
            Unmanaged<IdleCheck>.fromOpaque(context).takeUnretainedValue().farewellReceived.store(true, ordering: .relaxed)
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Whether the connection still looks open: no farewell read, nothing readable on its socket.
    var looksOpen: Bool {
        if farewellReceived.load(ordering: .relaxed) { return false }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) == 0
    }
}
