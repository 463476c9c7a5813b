internal import CPostgres
import Foundation
import Logging

/// The change feed's thread: owns the LISTEN connection, which nothing else touches.
final class ListenLoop {
    private let configuration: ConnectionConfiguration
    private let channel: String
    private let pingInterval: Duration
    /// How long a ping or a re-read may take before the connection counts as lost.
    private let statementDeadline: Duration
    private let maximumBackoff: Duration
    private let logger: Logger
    private let emit: @Sendable (ChangeFeedEvent) -> Void
    private let wakeUp: Int32
    private let isStopping: Locked<Bool>
    private let reader: WeakChangeFeedReader
    private let types: TypeCatalog

    private var connection: FeedConnection?
    private var hasConnected = false
    private var ignored = IgnoredNotifications()
    private var isInOutage = false
    private var backoff: Duration = .milliseconds(100)

    init(configuration: ConnectionConfiguration, channel: String, pingInterval: Duration, statementDeadline: Duration,
         maximumBackoff: Duration, logger: Logger, emit: @escaping @Sendable (ChangeFeedEvent) -> Void, wakeUp: Int32,
         isStopping: Locked<Bool>, reader: WeakChangeFeedReader, types: TypeCatalog) {
        self.types = types
        self.configuration = configuration
        self.channel = channel
        self.pingInterval = pingInterval
        self.statementDeadline = statementDeadline
        self.maximumBackoff = maximumBackoff
        self.logger = logger
        self.emit = emit
        self.wakeUp = wakeUp
        self.isStopping = isStopping
        self.reader = reader
    }

    func run() {
        defer {
            connection = nil
            close(wakeUp)
        }
        while !isStopping.withLock({ $0 }) {
            guard let feed = connection else {
                if !connect() {
                    waitForWakeUp(backoff)
                    backoff = min(backoff * 2, maximumBackoff)
                }
                continue
            }
            var descriptors = [pollfd(fd: feed.socket, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: wakeUp, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&descriptors, 2, Self.milliseconds(pingInterval))
            for line in ignored.flush() { logger.info("\(line.message)", metadata: line.metadata.mapValues { .string($0) }) }
            if ready < 0 { continue }  // EINTR
            if descriptors[1].revents != 0 { continue }  // stop() was called
            if ready == 0 {
                // A silent connection may be dead without the socket saying so: ask the server.
                feed.ping(deadline: statementDeadline) ? drainNotifications(feed) : lost(feed)
            } else if PQconsumeInput(feed.pg) == 0 {
                lost(feed)
            } else {
                drainNotifications(feed)
            }
        }
    }

    private func connect() -> Bool {
        do {
            connection = try FeedConnection(configuration, channel: channel, deadline: statementDeadline, types: types)
        } catch {
            reportOutage(error as? PostgresError ?? PostgresError(.connectionFailed, "\(error)"))
            return false
        }
        backoff = .milliseconds(100)
        isInOutage = false
        emit(hasConnected ? .reconnected : .connected)
        logger.debug("listening", metadata: ["channel": "\(channel)", "server": "\(configuration)"])
        hasConnected = true
        return true
    }

    private func lost(_ feed: FeedConnection) {
        let message = feed.errorMessage
        connection = nil
        reportOutage(PostgresError(.connectionLost, message.isEmpty ? "the listening connection was lost" : message))
    }

    /// Reports the first failure of an outage; retries during it stay quiet.
    private func reportOutage(_ error: PostgresError) {
        guard !isInOutage else { return }
        isInOutage = true
        logger.warning("change feed lost its connection; reconnecting", metadata: ["error": "\(error)", "sqlstate": "\(error.sqlState ?? "-")"])
        emit(.disconnected(error))
    }

    /// Drains every buffered notification, lets the reader re-read what changed, and repeats:
    /// notifications that arrive during those reads are buffered by libpq, where `poll` would
    /// not see them.
    private func drainNotifications(_ feed: FeedConnection) {
        let pg = feed.pg
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
                for line in ignored.record(payload: payload, reason: reason) {
                    logger.info("\(line.message)", metadata: line.metadata.mapValues { .string($0) })
                }
                emit(.ignored(payload: payload, reason: reason))
            }
            guard !batch.changes.isEmpty else { continue }
            reader.current?.refresh(batch.changes) { sql, values in try feed.query(sql, values, deadline: statementDeadline) }
            emit(.changes(batch.changes))
            if !feed.isHealthy { return lost(feed) }
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

    private func waitForWakeUp(_ duration: Duration) {
        var descriptor = pollfd(fd: wakeUp, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, Self.milliseconds(duration))
    }

    private static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }
}
