internal import CPostgres
import Foundation
import Logging

/// The change feed's thread: owns the LISTEN connection, which nothing else touches.
final class ListenLoop {
    private let configuration: ConnectionConfiguration
    private let channel: String
    private let pingInterval: Duration
    private let maximumBackoff: Duration
    private let logger: Logger
    private let emit: @Sendable (ChangeFeedEvent) -> Void
    private let wakeUp: Int32
    private let isStopping: Locked<Bool>
    private let reader: WeakChangeFeedReader

    private var connection: OpaquePointer?
    /// Statements prepared on the current connection (cleared with it).
    private var prepared: [String: String] = [:]
    private var hasConnected = false
    private var isInOutage = false
    private var backoff: Duration = .milliseconds(100)

    init(configuration: ConnectionConfiguration, channel: String, pingInterval: Duration, maximumBackoff: Duration,
         logger: Logger, emit: @escaping @Sendable (ChangeFeedEvent) -> Void, wakeUp: Int32, isStopping: Locked<Bool>,
         reader: WeakChangeFeedReader) {
        self.configuration = configuration
        self.channel = channel
        self.pingInterval = pingInterval
        self.maximumBackoff = maximumBackoff
        self.logger = logger
        self.emit = emit
        self.wakeUp = wakeUp
        self.isStopping = isStopping
        self.reader = reader
    }

    func run() {
        defer {
            if let connection { PQfinish(connection) }
            close(wakeUp)
        }
        while !isStopping.withLock({ $0 }) {
            guard let pg = connection else {
                if !connect() {
                    waitForWakeUp(backoff)
                    backoff = min(backoff * 2, maximumBackoff)
                }
                continue
            }
            var descriptors = [pollfd(fd: PQsocket(pg), events: Int16(POLLIN), revents: 0),
                               pollfd(fd: wakeUp, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&descriptors, 2, Self.milliseconds(pingInterval))
            if ready < 0 { continue }  // EINTR
            if descriptors[1].revents != 0 { continue }  // stop() was called
            if ready == 0 {
                ping(pg)
            } else if PQconsumeInput(pg) == 0 {
                lost(pg)
            } else {
                drainNotifications(pg)
            }
        }
    }

    private func connect() -> Bool {
        let pg: OpaquePointer
        do {
            pg = try openLibpqConnection(configuration)
        } catch {
            reportOutage(error as? PostgresError ?? PostgresError(.connectionFailed, "\(error)"))
            return false
        }
        let listen = PQexec(pg, "LISTEN \(SQLIdentifier.quoted(channel))")
        defer { PQclear(listen) }
        guard PQresultStatus(listen) == PGRES_COMMAND_OK else {
            let message = configuration.redact(Connection.tidy(String(cString: PQerrorMessage(pg))))
            PQfinish(pg)
            reportOutage(PostgresError(.server, message, statement: "LISTEN"))
            return false
        }
        connection = pg
        prepared.removeAll()
        backoff = .milliseconds(100)
        isInOutage = false
        emit(hasConnected ? .reconnected : .connected)
        logger.debug("listening", metadata: ["channel": "\(channel)", "server": "\(configuration)"])
        hasConnected = true
        return true
    }

    /// A silent connection may be dead without the socket saying so: ask the server.
    private func ping(_ pg: OpaquePointer) {
        let result = PQexec(pg, "SELECT 1")
        let healthy = PQresultStatus(result) == PGRES_TUPLES_OK && PQstatus(pg) == CONNECTION_OK
        PQclear(result)
        healthy ? drainNotifications(pg) : lost(pg)
    }

    private func lost(_ pg: OpaquePointer) {
        let message = configuration.redact(Connection.tidy(String(cString: PQerrorMessage(pg))))
        PQfinish(pg)
        connection = nil
        reportOutage(PostgresError(.connectionLost, message.isEmpty ? "the listening connection was lost" : message))
    }

    /// Reports the first failure of an outage; retries during it stay quiet.
    private func reportOutage(_ error: PostgresError) {
        guard !isInOutage else { return }
        isInOutage = true
        logger.warning("change feed disconnected; reconnecting", metadata: ["error": "\(error)"])
        emit(.disconnected(error))
    }

    /// Drains every buffered notification, lets the reader re-read what changed, and repeats:
    /// notifications that arrive during those reads are buffered by libpq, where `poll` would
    /// not see them.
    private func drainNotifications(_ pg: OpaquePointer) {
        while true {
            var batch = ChangeBatch()
            drain(pg, into: &batch)
            // A statement's announcement comes in parts, sent back to back at commit: wait for
            // the rest (briefly: a forged "more" only delays), so the statement is one batch.
            let deadline = ContinuousClock.now + .seconds(1)
            while batch.awaitsMore, ContinuousClock.now < deadline, waitReadable(pg, until: deadline) {
                guard PQconsumeInput(pg) != 0 else { break }
                drain(pg, into: &batch)
            }
            guard !batch.isEmpty else { return }
            for (payload, reason) in batch.ignored {
                logger.warning("ignored a notification", metadata: ["payload": "\(payload)", "reason": "\(reason)"])
                emit(.ignored(payload: payload, reason: reason))
            }
            guard !batch.changes.isEmpty else { continue }
            reader.current?.refresh(batch.changes) { sql, values in try query(pg, sql, values) }
            emit(.changes(batch.changes))
            if PQstatus(pg) != CONNECTION_OK { return lost(pg) }
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
        return poll(&descriptor, 1, max(0, Self.milliseconds(remaining))) > 0
    }

    /// Runs one statement on the feed's connection, on this thread.
    private func query(_ pg: OpaquePointer, _ sql: String, _ values: [SQLValue]) throws -> QueryResult {
        let bound = try BoundParameters(values, statement: sql)
        let name = try preparedName(pg, sql)
        let raw = bound.withPointers { count, values, lengths, formats in
            PQexecPrepared(pg, name, count, values, lengths, formats, 1)
        }
        return try check(pg, raw, sql)
    }

    /// The same few re-read statements run for every burst: prepare each once per connection.
    private func preparedName(_ pg: OpaquePointer, _ sql: String) throws -> String {
        if let name = prepared[sql] { return name }
        let name = "feed\(prepared.count + 1)"
        _ = try check(pg, PQprepare(pg, name, sql, 0, nil), sql)
        prepared[sql] = name
        return name
    }

    private func check(_ pg: OpaquePointer, _ raw: OpaquePointer?, _ sql: String) throws -> QueryResult {
        defer { PQclear(raw) }
        guard let raw, [PGRES_TUPLES_OK, PGRES_COMMAND_OK].contains(PQresultStatus(raw)) else {
            throw raw.map { ResultReader.error($0, statement: sql, redact: configuration.redact) }
                ?? PostgresError(.connectionLost, "the change feed's connection failed", statement: sql)
        }
        return ResultReader.read(raw)
    }

    private func waitForWakeUp(_ duration: Duration) {
        var descriptor = pollfd(fd: wakeUp, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, Self.milliseconds(duration))
    }

    private static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }
}
