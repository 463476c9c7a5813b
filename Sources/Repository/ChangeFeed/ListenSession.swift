internal import CPostgres
import Foundation

/// A feed session on a `LISTEN` connection: notifications from the announcement triggers.
final class ListenSession: FeedSession {
    private let connection: FeedConnection
    private let statementDeadline: Duration

    /// Listens on `channel` (blocking); statements end early once `stop` is readable (see ``FeedConnection``).
    init(_ configuration: ConnectionConfiguration, channel: String, statementDeadline: Duration, types: TypeCatalog, stop: Int32) throws {
        connection = try FeedConnection(configuration, channel: channel, deadline: statementDeadline, types: types, stop: stop)
        self.statementDeadline = statementDeadline
    }

    var socket: Int32 { connection.socket }
    var errorMessage: String { connection.errorMessage }
    var resumed: Bool { false }
    /// A `LISTEN` session ends only when its connection does.
    var wasRefused: Bool { false }
    func finish() {}

    func receive(_ output: FeedOutput) -> Bool {
        PQconsumeInput(connection.pg) != 0 && drain(output)
    }

    func idle(_ output: FeedOutput) -> Bool {
        // A silent connection may be dead without the socket saying so: ask the server.
        connection.ping(deadline: statementDeadline) && drain(output)
    }

    /// Drains every buffered notification, hands the changes on, and repeats: notifications
    /// that arrive while they are re-read are buffered by libpq, where `poll` would not see them.
    private func drain(_ output: FeedOutput) -> Bool {
        let pg = connection.pg
        while true {
            var batch = ChangeBatch()
            drain(pg, into: &batch)
            // A statement's announcement comes in parts, sent back to back at commit: wait for
            // the rest, so the statement is one batch: up to a second after the last part, and
            // 10 s in all (a loaded server may take longer than a second to send a long
            // statement's parts; forged "more" parts only delay, and only that long).
            let start = ContinuousClock.now
            var deadline = start + .seconds(1)
            while batch.awaitsMore, ContinuousClock.now < deadline, waitReadable(pg, until: deadline) {
                guard PQconsumeInput(pg) != 0 else { break }
                let before = batch.payloads
                drain(pg, into: &batch)
                if batch.payloads > before { deadline = min(ContinuousClock.now + .seconds(1), start + .seconds(10)) }
            }
            guard !batch.isEmpty else { return true }
            for (payload, reason) in batch.ignored { output.ignored(payload, reason) }
            guard !batch.changes.isEmpty else { continue }
            // Notifications come once their transactions committed: visible already.
            output.changes(batch.changes, { [connection, statementDeadline] sql, values in
                try connection.query(sql, values, deadline: statementDeadline)
            }, .visible)
            if !connection.isHealthy { return false }
        }
    }

    private func drain(_ pg: OpaquePointer, into batch: inout ChangeBatch) {
        while let notification = PQnotifies(pg) {
            batch.add(payload: String(cString: notification.pointee.extra))
            PQfreemem(notification)
        }
    }

    /// Waits until the connection's socket is readable (true) or `deadline` passes.
    private func waitReadable(_ pg: OpaquePointer, until deadline: ContinuousClock.Instant) -> Bool {
        var descriptor = pollfd(fd: PQsocket(pg), events: Int16(POLLIN), revents: 0)
        let remaining = ContinuousClock.now.duration(to: deadline)
        return poll(&descriptor, 1, max(0, Int32(clamping: ConnectionConfiguration.milliseconds(remaining)))) > 0
    }
}
