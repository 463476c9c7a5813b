import Foundation
public import Logging

/// Listens for change announcements on a connection of its own, and keeps listening.
///
/// The feed runs on a dedicated thread: it waits on the socket with `poll`, drains every
/// notification that arrived, and reports them as one ``ChangeFeedEvent/changes(_:)`` event,
/// coalesced per (table, key). When the connection is lost — the server restarted, the backend
/// was terminated, the network failed (TCP keepalives and a ping when idle detect it) — it
/// reports ``ChangeFeedEvent/disconnected(_:)``, reconnects with exponential backoff, listens
/// again, and reports ``ChangeFeedEvent/reconnected``: whatever changed during the outage was
/// not announced, so consumers re-read what they keep.
///
/// ```swift
/// let feed = ChangeFeed(configuration)
/// for await event in feed.events {
///     if case .changes(let changes) = event { refetch(changes.map(\.key)) }
/// }
/// ```
public final class ChangeFeed: Sendable {
    /// The channel installed triggers announce on (`live.enable_change_notifications`).
    public static let defaultChannel = "live_changes"
    /// The publication logical replication follows by default (``ChangeSource/logicalReplication(publication:abandonAfter:)``).
    public static let defaultPublication = "live_changes"

    /// Where this feed learns of changes.
    public let source: ChangeSource
    /// The channel this feed listens on; for logical replication, the publication it follows.
    public var channel: String {
        switch source {
        case .notifications(let channel): channel
        case .logicalReplication(let publication, _): publication
        }
    }
    /// Everything the feed reports, in order. Finishes after ``stop()``.
    public let events: AsyncStream<ChangeFeedEvent>

    private let isStopping = Locked(false)
    /// Whether the feed's thread has ended, and who waits for it to.
    private let ending = Locked<(ended: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    private let wakeUp: (read: Int32, write: Int32)
    /// Set by a consumer that re-reads rows on the feed's own thread (the live repository):
    /// changes and ignored notifications then go to it alone, not to ``events``.
    let reader = WeakChangeFeedReader()

    /// Starts listening on `channel`, as application `<configuration.applicationName> (change feed)`.
    /// The first event is ``ChangeFeedEvent/connected`` or,
    /// if the server cannot be reached yet, ``ChangeFeedEvent/disconnected(_:)``.
    /// - Parameters:
    ///   - configuration: the server and database to listen on.
    ///   - channel: the NOTIFY channel; the installed triggers use ``defaultChannel``.
    ///   - pingInterval: how long the connection may be silent before a ping checks it.
    ///   - statementDeadline: how long a ping, or a re-read on the feed's connection, may take
    ///     before the connection counts as lost. With `pingInterval`, this bounds how long a
    ///     silent network partition goes unnoticed (20 s by default).
    ///   - maximumBackoff: the longest wait between reconnection attempts.
    ///   - logger: receives outages (`.warning`), ignored notifications (`.info`, a few lines per
    ///     five seconds at most) and connections (`.debug`); by default, nothing is logged.
    public convenience init(_ configuration: ConnectionConfiguration, channel: String = ChangeFeed.defaultChannel,
                            pingInterval: Duration = .seconds(10), statementDeadline: Duration = .seconds(10), maximumBackoff: Duration = .seconds(2),
                            logger: Logger = Logger(label: "swift-live-postgres", factory: { _ in SwiftLogNoOpLogHandler() })) {
        self.init(configuration, channel: channel, pingInterval: pingInterval, statementDeadline: statementDeadline,
                  maximumBackoff: maximumBackoff, logger: logger, types: TypeCatalog())
    }

    /// Follows `source` instead of notifications on a channel: see ``ChangeSource``. The other
    /// parameters are those of ``init(_:channel:pingInterval:statementDeadline:maximumBackoff:logger:)``.
    public convenience init(_ configuration: ConnectionConfiguration, source: ChangeSource,
                            pingInterval: Duration = .seconds(10), statementDeadline: Duration = .seconds(10), maximumBackoff: Duration = .seconds(2),
                            logger: Logger = Logger(label: "swift-live-postgres", factory: { _ in SwiftLogNoOpLogHandler() })) {
        self.init(configuration, source: source, pingInterval: pingInterval, statementDeadline: statementDeadline,
                  maximumBackoff: maximumBackoff, logger: logger, types: TypeCatalog())
    }

    /// The same, sharing `types` with a pool over the same database (its re-reads' types).
    convenience init(_ configuration: ConnectionConfiguration, channel: String = ChangeFeed.defaultChannel,
                     pingInterval: Duration = .seconds(10), statementDeadline: Duration = .seconds(10), maximumBackoff: Duration = .seconds(2),
                     logger: Logger = Logger(label: "swift-live-postgres", factory: { _ in SwiftLogNoOpLogHandler() }), types: TypeCatalog) {
        self.init(configuration, source: .notifications(channel: channel), pingInterval: pingInterval, statementDeadline: statementDeadline,
                  maximumBackoff: maximumBackoff, logger: logger, types: types)
    }

    /// The same, following `source`.
    init(_ configuration: ConnectionConfiguration, source: ChangeSource,
         pingInterval: Duration = .seconds(10), statementDeadline: Duration = .seconds(10), maximumBackoff: Duration = .seconds(2),
         logger: Logger = Logger(label: "swift-live-postgres", factory: { _ in SwiftLogNoOpLogHandler() }), types: TypeCatalog) {
        self.source = source
        // Recognizable in pg_stat_activity, apart from the pool's connections.
        var named = configuration
        named.applicationName += " (change feed)"
        let configuration = named
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        }
        wakeUp = (fds[0], fds[1])
        let (events, continuation) = AsyncStream<ChangeFeedEvent>.makeStream()
        self.events = events
        let (isStopping, wakeUpRead, reader, ending) = (isStopping, fds[0], reader, ending)
        let description = switch source {
        case .notifications(let channel): "LISTEN \(channel)"
        case .logicalReplication(let publication, _): "logical replication of \(publication)"
        }
        let thread = Thread {
            // The loop, and the sessions it opens, live and die on this thread — as does the
            // replication slot they share, dropped when the feed stops.
            let slot = ReplicationSlot(abandonAfter: { if case .logicalReplication(_, let bytes) = source { bytes } else { 0 } }())
            let makeSession: () throws -> any FeedSession = switch source {
            case .notifications(let channel):
                { try ListenSession(configuration, channel: channel, statementDeadline: statementDeadline, types: types, stop: wakeUpRead) }
            case .logicalReplication(let publication, _):
                { try ReplicationSession(configuration, publication: publication, slot: slot, statementDeadline: statementDeadline, types: types,
                                         stop: wakeUpRead) }
            }
            FeedLoop(makeSession: makeSession, description: description, pingInterval: pingInterval, maximumBackoff: maximumBackoff,
                     logger: logger, emit: { continuation.yield($0) }, wakeUp: wakeUpRead, isStopping: isStopping, reader: reader).run()
            slot.drop(configuration, deadline: statementDeadline, types: types)
            continuation.finish()
            let waiters = ending.withLock { ending in
                defer { ending = (true, []) }
                return ending.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
        thread.name = "change feed (\(description))"
        thread.start()
    }

    deinit { stop() }

    /// Whether ``stop()`` was called.
    var isStopped: Bool { isStopping.withLock { $0 } }

    /// Waits until the feed has stopped (after ``stop()``): its connection is closed and, with
    /// logical replication, its slot dropped — within the statement deadline, after which a slot
    /// left behind is dropped later as abandoned (see ``ChangeSource``).
    public func waitUntilStopped() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let ended = ending.withLock { ending in
                if !ending.ended { ending.waiters.append(waiter) }
                return ending.ended
            }
            if ended { waiter.resume() }
        }
    }

    /// Stops listening and closes the connection; ``events`` then finishes. Idempotent. Returns
    /// at once: the feed's thread closes the connection (and drops a replication slot) right
    /// after; ``waitUntilStopped()`` waits for that.
    public func stop() {
        let alreadyStopping = isStopping.withLock { stopping in
            defer { stopping = true }
            return stopping
        }
        guard !alreadyStopping else { return }
        var byte: UInt8 = 1
        _ = write(wakeUp.write, &byte, 1)
        close(wakeUp.write)
    }
}
