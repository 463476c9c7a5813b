public import ServiceLifecycle
import Logging

extension LiveRepository: Service {
    /// Runs until graceful shutdown (SIGTERM in a `ServiceGroup`) or cancellation, then
    /// ``shutdown(timeout:)``: pending writes are flushed — for at most ``shutdownTimeout`` —
    /// and the change feed stops. The database is a service of its own: put it before the
    /// repository in the group, so that it closes after the repository has flushed.
    public func run() async throws {
        try? await gracefulShutdown()
        await shutdown(timeout: shutdownTimeout)
    }

    /// How long ``run()`` lets pending writes finish at shutdown: 10 seconds unless set. Keep
    /// it under what your platform allows between SIGTERM and SIGKILL (30 s on Kubernetes).
    public var shutdownTimeout: Duration {
        get { shutdownTimeoutSetting.withLock { $0 } }
        set { shutdownTimeoutSetting.withLock { $0 = newValue } }
    }

    /// Waits until every live value's pending writes are committed (or failed), at most
    /// `timeout`, then stops following changes and waits until the change feed's connection is
    /// closed and its replication slot, if any, dropped (within the feed's statement deadline).
    /// Returns whether the writes settled in time.
    @discardableResult
    public func shutdown(timeout: Duration = .seconds(10)) async -> Bool {
        isClosing.withLock { $0 = true }
        let live = identity.withLock { $0.allStores() }
        logger.debug("flushing pending writes", metadata: ["live_values": "\(live.count)"])
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withTaskGroup(of: Void.self) { saves in
                    // Waits for the writes only: each failure is on `errors` already, and stays
                    // for the `save()` of the task whose edit it was.
                    for store in live { saves.addTask { try? await store.save() } }
                }
            }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
        // Counted, not inferred from which wait ended first: a shutdown cancelled meanwhile
        // ends both at once, with nothing pending or not.
        let unsettled = live.filter(\.hasUnsettledEdits)
        let settled = unsettled.isEmpty
        if !settled {
            // Which rows, a few of them: their edits may be lost.
            let rows = unsettled.prefix(5).map { "\($0.shownTableName) \(TerminalText.escaped($0.keyText, limit: 100))" }.joined(separator: "; ") + (unsettled.count > 5 ? "; …" : "")
            logger.warning(Task.isCancelled ? "shutdown was cancelled before pending writes finished" : "pending writes did not finish before shutdown",
                           metadata: ["timeout": "\(timeout)", "live_values_unsettled": "\(unsettled.count)", "rows": "\(rows)"])
        }
        close()
        await feed.waitUntilStopped()
        broadcast.finish()
        return settled
    }

    /// Logs a reported error at its level, with its table and key as metadata, and counts it.
    /// `closing`: ``close()`` or ``shutdown(timeout:)`` has begun, after which reads stopped by
    /// the close (the repository's or its pool's) are routine.
    static func log(_ error: LiveRecordError, to logger: Logger, metrics: LiveMetrics, closing: Bool) {
        switch error {
        case .conflict(let table, let key, let columns, _, _, let policy):
            metrics.conflicts.increment()
            logger.info("write conflict", metadata: ["table": "\(table)", "key": "\(key)", "columns": "\(columns.joined(separator: ","))",
                                                     "policy": "\(policy)"])
        case .writeFailed(let table, let key, let failure):
            logger.warning(error.mayHaveCommitted ? "write may have committed: the connection was lost after it was sent" : "write failed and was reverted", metadata: ["table": "\(table)", "key": "\(key)",
                                                                        "sqlstate": "\(failure.sqlState ?? "-")", "error": "\(failure)"])
        case .refreshFailed(let table, let failure as PostgresError) where closing && failure.kind == .closed:
            // Reads still queued when the repository or the pool closed (after the writes flushed).
            logger.debug("re-reading changed rows stopped at shutdown", metadata: ["table": "\(table)", "error": "\(failure)"])
        case .refreshFailed(let table, let failure):
            logger.warning("re-reading changed rows failed", metadata: ["table": "\(table)", "error": "\(failure)"])
        case .deleted(let table, let key):
            logger.info("edit of a deleted row", metadata: ["table": "\(table)", "key": "\(key)"])
        case .changeFeedReconnected:
            metrics.reconnects.increment()
            logger.info("change feed listening again; live values brought up to date")
        case .membershipIsReadOnly(let table):
            logger.info("edit of a live query's membership undone", metadata: ["table": "\(table)"])
        case .changeFeedDisconnected, .notFound:
            break  // the feed logs its outages; a missing row is thrown to its reader
        }
    }
}
