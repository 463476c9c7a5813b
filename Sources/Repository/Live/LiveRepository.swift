import Foundation
public import CoreMetrics
public import Logging

/// Live handles onto rows: `read(id:)` returns a ``Var`` that writes through to its row and
/// follows changes made by any process.
///
/// ```swift
/// let repository = LiveRepository(database)
/// let person: Var<Person> = try await repository.read(id: 42)
/// person[\.name].value = "Ada"     // observers run now; the UPDATE follows
/// try await person.save()           // waits until it is durable, throws what failed
/// ```
///
/// - One live store per (table, key): reading the same row twice gives handles that share
///   their value, their writes and their re-reads.
/// - Writes send only the columns this process edited, `WHERE <key> = $1 AND xmin = $2`. When
///   another writer got there first, the row is re-read and the edited columns are written
///   again on top of it; a column both changed (to different values) follows the
///   ``ConflictPolicy`` and is reported.
/// - A ``ChangeFeed`` announces every committed change; the repository re-reads the changed
///   rows in batches and applies re-reads in the order they started. After the feed
///   reconnects, every live row is re-read, so nothing committed during an outage is missed.
/// - Failures are never silent: the handle returns to the database's state, `save()` throws,
///   and ``errors`` reports it for writes nobody awaited.
/// - Live values keep their repository open: a handle, a live query or a live `SELECT` follows
///   changes for as long as it is held, whether the program still holds the repository or not.
///   The repository closes once neither it nor any live value from it is held — or at
///   ``close()``, after which live values stop following changes.
///
/// See <doc:SyncSemantics> for exactly what holds.
public final class LiveRepository: Sendable {
    /// The pool reads and writes go through.
    public let database: Database
    /// Problems nobody awaited — failed writes, conflicts, writes to deleted rows — and the
    /// change feed's outages and recoveries. Every access is a new subscriber that gets every
    /// error reported from then on; one that does not read keeps at most 1,000 (the oldest are
    /// dropped and counted in ``droppedErrors``).
    public var errors: AsyncStream<LiveRecordError> { broadcast.stream() }

    /// Errors dropped because a subscriber of ``errors`` had 1,000 unread.
    public var droppedErrors: Int { broadcast.dropped }

    /// Where this repository logs (the database's logger unless another was given).
    public let logger: Logger

    let policy: ConflictPolicy
    let feed: ChangeFeed
    let broadcast = ErrorBroadcast()
    let report: @Sendable (LiveRecordError) -> Void
    let metrics: LiveMetrics
    /// What every live value shares.
    @usableFromInline let context: LiveContext
    /// Numbers every read as it starts, so that reads apply in the order they started.
    @usableFromInline let sequence = ReadSequence()
    /// The identity map: the live stores, the announcements, the aggregates' children (see
    /// ``IdentityMap``). A store's lock is never taken while this one is held.
    @usableFromInline let identity = Locked(IdentityMap())
    let listener = Locked<Task<Void, Never>?>(nil)
    let reads = Locked(ReadCount())
    /// What the repository knows of its change feed: whether reads may start, failed re-reads
    /// and their repair, the stores waiting to be read again (see ``FeedState``). A leaf lock.
    let feedState = Locked(FeedState())
    /// The live queries announcements go to, and each record type's router of them (see
    /// ``QueryRegistry``). A leaf lock.
    let queries = Locked(QueryRegistry())
    /// Called with the repair a failed re-read scheduled (set once the repository exists).
    let rereadFailed = Locked<@Sendable (FeedState.Repair) -> Void>({ _ in })
    /// Backs ``shutdownTimeout``.
    let shutdownTimeoutSetting = Locked<Duration>(.seconds(10))
    /// Set once ``close()`` or ``shutdown(timeout:)`` begins: reads the close stops then are
    /// expected, and not reported.
    let isClosing = Locked(false)
    /// Each record type's table, resolved once.
    let tables = Locked<[ObjectIdentifier: any Sendable]>([:])
    /// The engines of live stores' types, made where the types are known (see ``StoreEngine``).
    /// Its lock is taken with no other held, and nothing is taken under it.
    let engines = Locked(StoreEngines())
    /// The tables held live, checked now and then for still being followed (see ``FollowWatch``).
    /// A leaf lock: nothing else is taken while it is held.
    let followed = Locked(FollowWatch())

    /// Entries in the identity map, live or awaiting pruning (for tests).
    var identityMapCount: Int { identity.withLock { $0.count } }

    /// How many queries reading rows this repository has run (reads, re-reads, live query
    /// membership checks), for monitoring and benchmarks.
    public var rowQueries: Int { reads.withLock { $0.queries } }

    /// How many rows those queries returned: what following changes costs.
    public var rowsRead: Int { reads.withLock { $0.rows } }

    /// How many changed rows live values took from the logical replication stream as it
    /// delivered them, with no query (see ``ChangeSource/logicalReplication(publication:abandonAfter:)``).
    public var rowsFromStream: Int { reads.withLock { $0.streamed } }

    /// An entry of the identity map: a row, or an aggregate rooted at that row.
    @usableFromInline struct StoreKey: Hashable, Sendable {
        @usableFromInline let table: String
        @usableFromInline let key: String
        @usableFromInline var isAggregate = false

        @usableFromInline init(table: String, key: String, isAggregate: Bool = false) {
            (self.table, self.key, self.isAggregate) = (table, key, isAggregate)
        }
    }

    /// A repository over `database`, listening for changes on the channel the installed
    /// triggers use.
    /// - Parameters:
    ///   - database: the pool reads and writes go through.
    ///   - conflictPolicy: what happens when another writer changed a column this process edited.
    ///   - channel: the NOTIFY channel the installed triggers use.
    ///   - logger: where to log; the database's logger when nil.
    ///   - metricsFactory: where metrics go; the database's when nil.
    public convenience init(_ database: Database, conflictPolicy: ConflictPolicy = .databaseWins,
                            channel: String = ChangeFeed.defaultChannel, logger: Logger? = nil, metricsFactory: (any MetricsFactory)? = nil) {
        self.init(database, conflictPolicy: conflictPolicy, changes: .notifications(channel: channel), logger: logger, metricsFactory: metricsFactory)
    }

    /// A repository over `database` that learns of changes from `source`: notifications from
    /// the installed triggers, or logical replication (see ``ChangeSource``). Everything else is
    /// as with ``init(_:conflictPolicy:channel:logger:metricsFactory:)``.
    ///
    /// ```swift
    /// try await LiveSchema.publish("members", on: database)   // no triggers on writes
    /// let repository = LiveRepository(database, changes: .logicalReplication)
    /// ```
    public init(_ database: Database, conflictPolicy: ConflictPolicy = .databaseWins, changes source: ChangeSource,
                logger: Logger? = nil, metricsFactory: (any MetricsFactory)? = nil) {
        self.database = database
        self.policy = conflictPolicy
        let logger = logger ?? database.logger
        self.logger = logger
        let metrics = LiveMetrics(factory: metricsFactory ?? database.metrics.factory)
        self.metrics = metrics
        let (broadcast, feedState, rereadFailed, isClosing) = (broadcast, feedState, rereadFailed, isClosing)
        let report: @Sendable (LiveRecordError) -> Void = { error in
            let closing = isClosing.withLock { $0 }
            if case .refreshFailed(_, let failure) = error {
                // A re-read stopped because the repository (or its pool) is closing is routine:
                // logged, not reported.
                if closing, (failure as? PostgresError)?.kind == .closed { return Self.log(error, to: logger, metrics: metrics, closing: true) }
                let repairable = RereadRepair.mayPass(after: failure)
                if let repair = feedState.withLock({ $0.rereadFailed(repairable: repairable) }) { rereadFailed.withLock { $0 }(repair) }
            }
            broadcast.publish(error)
            Self.log(error, to: logger, metrics: metrics, closing: closing)
        }
        self.report = report
        context = LiveContext(sequence: sequence, policy: conflictPolicy, report: report, metrics: metrics, reads: reads, database: database)
        feed = ChangeFeed(database.configuration, source: source, logger: logger, types: database.types)
        let events = feed.events
        defer {
            feed.reader.set(self)  // announced rows are re-read on the feed's thread
            rereadFailed.withLock { $0 = { [weak self] repair in self?.scheduleRepair(repair) } }
        }
        listener.withLock {
            $0 = Task { [weak self] in
                for await event in events {
                    guard let self else { return }
                    await self.handle(event)
                }
            }
        }
    }

    deinit { close() }

    /// Stops following changes. Handles keep their values; writes still go through; reads that
    /// would make new live values throw (kind ``PostgresError/Kind/closed``). Returns at once:
    /// a repository following logical replication drops its replication slot a moment later,
    /// on the feed's thread. A program about to exit awaits ``shutdown(timeout:)`` instead,
    /// which lets pending writes finish and waits until the slot is dropped.
    public func close() {
        isClosing.withLock { $0 = true }
        feed.stop()
        listener.withLock { $0?.cancel() }
        followed.withLock { $0.task }?.cancel()
    }

    /// A live handle onto the row of `R` whose id is `id`.
    /// - Throws: ``LiveRecordError/notFound(table:key:)`` when there is no such row; a
    ///   ``PostgresError`` when this repository does not learn the table's changes (not enabled
    ///   with ``LiveSchema/enable(_:on:)``, or not published with
    ///   ``LiveSchema/publish(_:on:publication:)`` when it follows logical replication), since the
    ///   value would never follow other processes; or the ``PostgresError``/``ColumnDecodingError`` of reading it.
    @inlinable
    public func read<R: Record>(_ type: R.Type = R.self, id: R.ID) async throws -> Var<R> {
        useEngine(.specialized(for: R.self))
        // Inlined, as the engine is: the read, its decoding and the new store run compiled for `R`.
        let table = try await table(for: R.self)
        let lease: StoreLease<RecordTable<R>>?
        do {
            lease = try await sharedStores(table, ids: [id]).first
        } catch let error as PostgresError {
            throw table.idNotOfKey(error, id: id) ?? error
        }
        guard let lease else { throw LiveRecordError.notFound(table: table.shownName, key: Self.keyText(id)) }
        return lease.handle()
    }

    @usableFromInline func table<R: Record>(for _: R.Type) async throws -> RecordTable<R> {
        if let known = tables.withLock({ $0[ObjectIdentifier(R.self)] }) as? RecordTable<R> { return known }
        let resolved = try await RecordTable<R>.resolve(database, reads: reads)
        try await refuseUnfollowed(resolved)
        watchFollowed(resolved.quoted)
        tables.withLock { $0[ObjectIdentifier(R.self)] = resolved }
        return resolved
    }

    /// An id as the identity map and change announcements name it (see ``KeyText``).
    @usableFromInline static func keyText(_ id: some Encodable) -> String { KeyText.text(of: id) }
}
