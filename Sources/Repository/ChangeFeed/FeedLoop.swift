import Foundation
import Logging

/// The change feed's thread: owns the feed's session (see ``FeedSession``), which nothing else
/// touches — waits on its socket, hands what arrives to the reader (or, with none, to the
/// feed's events), reports the connection's state in the events, and,
/// when the connection is lost, reports it and opens a new session with backoff.
final class FeedLoop {
    private let makeSession: () throws -> any FeedSession
    private let description: String
    private let pingInterval: Duration
    private let logger: Logger
    private let emit: @Sendable (ChangeFeedEvent) -> Void
    private let wakeUp: Int32
    private let isStopping: Locked<Bool>
    private let reader: WeakChangeFeedReader

    private var session: (any FeedSession)?
    private var hasConnected = false
    private var ignored = IgnoredNotifications()
    private var outage = OutageReports()
    private var pacing: ReconnectPacing

    /// A loop over the sessions `makeSession` opens (blocking: it connects); `description`
    /// names the source in the log.
    init(makeSession: @escaping () throws -> any FeedSession, description: String, pingInterval: Duration, maximumBackoff: Duration,
         logger: Logger, emit: @escaping @Sendable (ChangeFeedEvent) -> Void, wakeUp: Int32, isStopping: Locked<Bool>, reader: WeakChangeFeedReader) {
        self.makeSession = makeSession
        self.description = description
        self.pingInterval = pingInterval
        self.logger = logger
        self.emit = emit
        self.wakeUp = wakeUp
        self.isStopping = isStopping
        self.reader = reader
        pacing = ReconnectPacing(maximum: maximumBackoff)
    }

    func run() {
        defer {
            session?.finish()
            session = nil
            close(wakeUp)
        }
        while !isStopping.withLock({ $0 }) {
            guard let current = session else {
                if !connect() { waitForWakeUp(pacing.openFailed()) }
                continue
            }
            var descriptors = [pollfd(fd: current.socket, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: wakeUp, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&descriptors, 2, Self.milliseconds(pingInterval))
            for line in ignored.flush() { logger.info("\(line.message)", metadata: line.metadata.mapValues { .string($0) }) }
            if ready < 0 { continue }  // EINTR
            if descriptors[1].revents != 0 { continue }  // stop() was called
            let healthy = ready == 0 ? current.idle(output) : current.receive(output)
            if !healthy { lost(current) }
        }
    }

    /// Hands changes to the reader (which re-reads on the session's connection) or, with no
    /// reader, to the events; logs ignored notifications, and reports them with no reader.
    ///
    /// A reader takes the changes instead of the events: each event wakes the task that
    /// consumes them on Swift's pool, and a live repository's consumer has nothing to do
    /// with changes its reader applied (measured: 5.5% of write-through's samples, a wake-up per batch).
    private var output: FeedOutput {
        FeedOutput(changes: { [reader, emit] changes, query, visibility in
            // A consumer may read the rows as soon as it hears of them.
            guard let reader = reader.current else { return visibility.ensure() ? emit(.changes(changes)) : () }
            reader.refresh(changes, using: query, visibility: visibility)
        }, ignored: { [self] payload, reason in
            for line in ignored.record(payload: payload, reason: reason) {
                logger.info("\(line.message)", metadata: line.metadata.mapValues { .string($0) })
            }
            if reader.current == nil { emit(.ignored(payload: payload, reason: reason)) }
        })
    }

    private func connect() -> Bool {
        do {
            session = try makeSession()
        } catch {
            // Stopped while the session started (see ``FeedConnection``): not an outage.
            if !isStopping.withLock({ $0 }) { reportOutage(error as? PostgresError ?? PostgresError(.connectionFailed, "\(error)")) }
            return false
        }
        pacing.opened(at: .now)
        let recovered = outage.listens()
        // A first session after failed ones is listening again, as far as anyone was told.
        emit(!hasConnected && !recovered ? .connected : session?.resumed == true ? .resumed : .reconnected)
        logger.log(level: recovered ? .info : .debug, recovered ? "change feed listening again" : "listening", metadata: ["source": "\(description)"])
        hasConnected = true
        // What libpq read while the session started is in its buffer, where `poll` cannot see it.
        if let session, !session.receive(output) { lost(session) }
        return true
    }

    private func lost(_ current: any FeedSession) {
        let message = current.errorMessage
        session = nil
        // Ended by `stop()` (a statement of the session's, waiting, was cut short): no outage.
        if isStopping.withLock({ $0 }) { return }
        // A stream the server refused (see ``FeedSession/wasRefused``) is no lost connection.
        reportOutage(PostgresError(current.wasRefused ? .server : .connectionLost, message.isEmpty ? "the change feed's connection was lost" : message))
        // A session the server refused soon after it opened, or cut on sight, is not opened again at once (see ``ReconnectPacing``).
        let pause = pacing.ended(at: .now, refused: current.wasRefused)
        if pause > .zero { waitForWakeUp(pause) }
    }

    /// Reports the failures of an outage that ``OutageReports`` says to.
    private func reportOutage(_ error: PostgresError) {
        guard outage.failed("\(error.kind) \(error.sqlState ?? "") \(error.message)") else { return }
        logger.warning(error.kind == .connectionLost ? "change feed lost its connection; reconnecting" : "change feed could not start following changes; trying again",
                       metadata: ["error": "\(error)", "sqlstate": "\(error.sqlState ?? "-")"])
        emit(.disconnected(error))
    }

    private func waitForWakeUp(_ duration: Duration) {
        var descriptor = pollfd(fd: wakeUp, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, Self.milliseconds(duration))
    }

    private static func milliseconds(_ duration: Duration) -> Int32 {
        Int32(clamping: ConnectionConfiguration.milliseconds(duration))
    }
}
