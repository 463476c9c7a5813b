public import CoreMetrics
public import Logging
public import ServiceLifecycle

/// A pool of connections to one PostgreSQL database, shared by concurrent tasks.
///
/// Connections open lazily up to ``maximumConnections``; a task that finds none free waits
/// (cancellably) for one to come back — also when the server refuses another connection while
/// the pool holds some (it is at its connection limit), trying again for at most the connect
/// timeout; a refused open with none held is tried again for a second, then fails. Broken connections are dropped, never reused; when one
/// turns out to be lost, the idle ones — likely lost with it, as in a server restart — are
/// dropped too. Connections idle for longer than ``idleTimeout`` are closed.
///
/// In a server, run it in a `ServiceGroup` (it is a `Service`): ``run()`` closes idle
/// connections as they time out, and closes the pool at graceful shutdown. Metrics go to
/// swift-metrics (`postgres_pool_connections`, `postgres_pool_waiters`,
/// `postgres_pool_wait_duration`, `postgres_statement_duration`, `postgres_statement_errors`,
/// `postgres_pipeline_batch_size`).
///
/// ```swift
/// let database = try Database(.environment())
/// let rows = try await database.query("SELECT name FROM people WHERE id = $1", [42])
/// ```
public final class Database: Sendable {
    /// Where the pool connects.
    public let configuration: ConnectionConfiguration
    /// The most connections the pool opens at once.
    public let maximumConnections: Int
    /// How long a connection may sit idle before the pool closes it.
    public let idleTimeout: Duration

    /// Where the pool, and the live repositories over it, log. Routine events go to `.debug` and
    /// `.info`, faults to `.warning`; by default nothing is logged.
    public let logger: Logger

    let pool: Locked<PoolState>
    let metrics: PostgresMetrics
    /// Statements waiting to be sent together (see ``pipelined(_:_:)``).
    let pipelineQueue: Locked<PipelineQueue<PipelinedStatement>>
    /// The database's types this library does not know by OID, looked up once for the pool.
    let types = TypeCatalog()

    /// A pool over `configuration` that opens at most `maximumConnections` connections and
    /// closes those idle for longer than `idleTimeout`.
    /// - Parameters:
    ///   - configuration: where to connect.
    ///   - maximumConnections: the most connections open at once.
    ///   - idleTimeout: how long a connection may sit idle before it is closed (zero: once idle;
    ///     ``run()`` checks at most every 30 s and at least 100 ms apart).
    ///   - logger: where to log (by default, nowhere).
    ///   - metricsFactory: where metrics go (by default, swift-metrics' bootstrapped backend).
    public init(_ configuration: ConnectionConfiguration, maximumConnections: Int = 8, idleTimeout: Duration = .seconds(300),
                logger: Logger = Logger(label: "swift-live-postgres", factory: { _ in SwiftLogNoOpLogHandler() }),
                metricsFactory: (any MetricsFactory)? = nil) {
        precondition(maximumConnections > 0, "a pool needs at least one connection")
        self.configuration = configuration
        self.maximumConnections = maximumConnections
        self.idleTimeout = idleTimeout
        self.logger = logger
        self.metrics = PostgresMetrics(factory: metricsFactory ?? MetricsSystem.factory)
        self.pool = Locked(PoolState())
        // One lane per connection: a statement waits for a batch only where it would otherwise
        // wait for a connection.
        self.pipelineQueue = Locked(PipelineQueue(lanes: maximumConnections, maximumBatch: 64))
    }

    /// Runs `body` with a connection of its own, returned to the pool afterwards.
    ///
    /// Inside `body`, use the connection it is given: a task that holds every connection of
    /// the pool and asks the pool for another (`database.query` here, with one connection)
    /// gets an error at once rather than waiting for itself forever.
    ///
    /// The connection is `body`'s for its run only. A reference kept after it is refused
    /// (``PostgresError/Kind/closed``, nothing sent) while the connection sits idle in the pool;
    /// once another task has taken it out, what it sends would run among that task's
    /// statements — so keep none.
    @discardableResult
    public func withConnection<T>(_ body: (Connection) async throws -> T) async throws -> T {
        try await withPooledConnection { connection in try await holding { try await body(connection) } }
    }

    /// ``withConnection(_:)`` for the library's own statements, which ask for no other connection.
    func withPooledConnection<T>(_ body: (Connection) async throws -> T) async throws -> T {
        let connection = try await acquire()
        do {
            let result = try await body(connection)
            release(connection)
            return result
        } catch {
            release(connection)
            throw error
        }
    }

    /// Runs one statement on a pooled connection. Cancelling the task cancels the statement
    /// on the server (see ``Connection/query(_:_:)``).
    ///
    /// When the server ended the connection before the statement started (a restart, a
    /// failover, `pg_terminate_backend`, `idle_session_timeout`), the statement runs again on
    /// another connection. That is known for sure, or not at all: an idle connection the server
    /// already closed is not handed out; and a marker sent just ahead of the statement is
    /// answered by the server's `FATAL` only if the server ended before reading the statement
    /// (see ``PostgresError/statementDidNotRun``). A statement that may have started — the
    /// connection lost while it ran, or with no answer at all — is never run again: the error
    /// is thrown.
    @discardableResult
    public func query(_ sql: String, _ parameters: [any SQLValueConvertible] = []) async throws -> QueryResult {
        let values = parameters.map(\.sqlValue)
        let start = ContinuousClock.now
        do {
            let result = try await retryingUnrun { try await withPooledConnection { try await $0.query(sql, values: values, marked: true) } }
            metrics.statementDuration.recordSince(start)
            return result
        } catch {
            metrics.statementFailed(error)
            throw error
        }
    }

    /// Runs `body` — which takes a connection of the pool and runs one statement (or a batch, or
    /// `BEGIN`) — and again, on another connection, while it fails with a lost connection
    /// whose statement certainly did not run (``PostgresError/statementDidNotRun``); three
    /// attempts at most. The first loss drops the pool's idle connections, so the next attempt
    /// usually opens a new one.
    func retryingUnrun<T>(_ body: () async throws -> T) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await body()
            } catch let error as PostgresError where error.kind == .connectionLost && error.statementDidNotRun && attempt < 3 {
                attempt += 1
                logger.info("the connection was lost before the statement ran; running it on another connection",
                            metadata: ["reason": "\(error.message)", "sqlstate": "\(error.sqlState ?? "none")"])
            }
        }
    }

    /// Updates the pool's gauges.
    func recordPool() {
        let (idle, open, waiting) = pool.withLock { ($0.idle.count, $0.openCount, $0.waiters.count) }
        metrics.connectionsIdle.record(idle)
        metrics.connectionsInUse.record(open - idle)
        metrics.waiters.record(waiting)
    }

    /// Closes idle connections and refuses new work; connections in use close when returned.
    public func close() {
        // Idle connections close as their last reference goes with the pool's list.
        let waiters = pool.withLock { state in
            state.isClosed = true
            state.dropIdle()
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.continuation.resume(throwing: PostgresError(.closed, "the database pool is closed")) }
    }
}

extension Database: Service {
    /// Closes connections that outlive ``idleTimeout`` while they sit idle, until graceful
    /// shutdown (or cancellation); then closes the pool.
    public func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                while !Task.isCancelled {
                    // At least a tenth of a second apart: a timeout of zero (close connections once
                    // idle) would otherwise make this loop spin.
                    try? await Task.sleep(for: max(.milliseconds(100), min(idleTimeout, .seconds(30))))
                    let expired = pool.withLock { $0.dropExpired(idleTimeout: idleTimeout) }
                    if expired > 0 { logger.debug("closed idle connections", metadata: ["count": "\(expired)"]) }
                    recordPool()
                }
            }
            try? await gracefulShutdown()
            group.cancelAll()
        }
        close()
        logger.debug("pool closed", metadata: ["server": "\(configuration)"])
    }
}
