import Foundation
import Logging

extension LiveRepository {
    // MARK: - Following the feed

    /// Waits until the feed listens (see ``ListeningGate``): at most `timeout` for all callers
    /// together, and not at all once the feed has failed to connect. Cancellable.
    /// - Throws: kind ``PostgresError/Kind/closed`` once the repository is closed: a value read
    ///   then would never follow changes.
    @usableFromInline func waitUntilListening(timeout: Duration = .seconds(10)) async throws {
        if feed.isStopped {
            throw PostgresError(.closed, "this live repository is closed: a live value read now would never follow changes")
        }
        let id: Int? = feedState.withLock { $0.gate.isOpen ? nil : $0.nextWaiter() }
        guard let id else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (mayStart, deadline) = feedState.withLock { $0.enter(id, continuation, timeout: timeout) }
                if mayStart { return continuation.resume() }
                if Task.isCancelled, let waiter = feedState.withLock({ $0.leave(id) }) {
                    return waiter.resume(throwing: CancellationError())
                }
                guard let deadline else { return }
                Task { [feedState] in
                    try? await Task.sleep(until: deadline)
                    for waiter in feedState.withLock({ $0.giveUpWaiting() }) { waiter.resume() }
                }
            }
        } onCancel: {
            feedState.withLock { $0.leave(id) }?.resume(throwing: CancellationError())
        }
    }

    /// Does what a change of the feed's connection asks (see ``FeedState/Step``).
    func take(_ step: FeedState.Step) {
        for waiter in step.release { waiter.resume() }
        if step.resyncEverything { resyncEverything() }
    }

    /// The feed could not connect: reads go ahead rather than wait for it.
    func feedFailed() {
        for waiter in feedState.withLock({ $0.giveUpWaiting() }) { waiter.resume() }
    }

    /// After an outage, or reads made without the feed: every live row is re-read and every
    /// live query run again. The rows of a type live queries hold go through their router,
    /// after the queries' whole runs, so that each list changes in one update (see
    /// ``RecordQueryRouter/resync(_:)``); the others are re-read here.
    func resyncEverything() {
        let queries = queries.withLock { $0.live() }
        // A router follows its table while it routes for some query (``RecordQueryRouter/follows(_:)``).
        let routedTypes = Set(queries.compactMap { $0.routesRowsTo != nil && $0.query.follows($0.query.tableName) ? $0.routesRowsTo : nil })
        var routed: [ObjectIdentifier: [any AnyLiveStore]] = [:]
        var others: [any AnyLiveStore] = []
        for store in identity.withLock({ $0.liveStores() }) {
            let type = ObjectIdentifier(type(of: store))
            if routedTypes.contains(type) { routed[type, default: []].append(store) } else { others.append(store) }
        }
        scheduleRefresh(others)
        for (query, routesRowsTo) in queries {
            if let routesRowsTo, routedTypes.contains(routesRowsTo) { query.resync(routed[routesRowsTo] ?? []) } else { query.rerun() }
        }
    }

    /// A re-read failed: once the repair's delay is over (see ``RereadRepair``), everything
    /// live is read again — unless a repair is scheduled already, or the feed has stopped.
    func scheduleRepair(_ repair: FeedState.Repair) {
        guard !feed.isStopped else { return }
        // A line when a series starts, and a warning when it reaches its longest delay.
        let level: Logger.Level = repair.attempt == 1 ? .info : repair.reachesLimit ? .warning : .debug
        logger.log(level: level, "a re-read failed; everything live is read again", metadata: ["after": "\(repair.delay)", "repairs": "\(repair.attempt)"])
        // One task per scheduled repair at most (``RereadRepair`` joins failures meanwhile). It
        // holds no lock while it waits, and takes `feedState` only briefly, with no other lock
        // held; weak, so it never keeps the repository alive.
        Task { [weak self] in
            try? await Task.sleep(for: repair.delay)
            guard let self, !feed.isStopped else { return }
            feedState.withLock { $0.repairStarts() }  // a failure of the repair's reads counts again
            resyncEverything()
        }
    }

    func handle(_ event: ChangeFeedEvent) async {
        switch event {
        case .changes, .ignored:
            break  // a feed with a reader (this repository) hands its changes to the reader instead
        case .reconnected:
            take(feedState.withLock { $0.feedReconnected() })
            report(.changeFeedReconnected)
        case .resumed:
            // What was committed meanwhile is on its way — but re-reads of changes confirmed
            // before the outage may have failed in it: then everything is read again.
            take(feedState.withLock { $0.feedListens(resumed: true) })
            report(.changeFeedReconnected)
        case .disconnected(let error):
            feedFailed()
            report(.changeFeedDisconnected(error))
        case .connected:
            take(feedState.withLock { $0.feedListens() })
        }
    }

    /// The live stores these changes may have changed: a row (or an aggregate's root)
    /// inserted, deleted, or updated to another version than the one held.
    func staleStores(for changes: [Change], skipping routed: Set<RoutedStores> = []) -> [any AnyLiveStore] {
        let number = sequence.next()
        let keys = changes.map { StoreKey(table: $0.table, key: $0.key.description) }
        // The announcements recorded and the stores found under one lock, in one pass.
        let found = identity.withLock { $0.candidates(for: changes, keys: keys, announcedAs: number, skipping: routed) }
        let (candidates, truncatedStores, truncated) = (found.stores, found.truncated, found.truncatedTables)
        // Outside the identity map's lock: each store takes its own. Rows from the replication
        // stream are decoded together, a store type at a time.
        var stale: [any AnyLiveStore] = []
        var streamed: [ObjectIdentifier: StreamedGroup] = [:]
        for (store, table) in truncatedStores where store.isStale(after: Change(table: table, operation: .truncate, key: .text(""), version: 0)) {
            stale.append(store)
        }
        for (store, index) in candidates {
            // A table truncated in this batch is read whole: no row of it is taken meanwhile.
            if changes[index].row != nil && !truncated.contains(changes[index].table) {
                streamed[ObjectIdentifier(type(of: store)), default: StreamedGroup()].append(store, changes[index])
            } else if store.isStale(after: changes[index]) {
                stale.append(store)
            }
        }
        // On this thread, each store's rows in the stream's order. (Splitting a large batch over
        // the processors cost about 20% more CPU per row, with no gain in time on a 2-core
        // machine whose cores the server shares: both parts retain and release the same objects
        // — the rows' column list, the table's name —, whose counts then bounce between cores.)
        for group in streamed.values { stale += engine(for: group.stores[0]).takeStreamed(group).stores }
        return stale
    }

    /// Queues stale stores for one refresh worker, so announcements that arrive while it
    /// reads are re-read together in the next batch rather than one query per announcement.
    @usableFromInline func scheduleRefresh(_ stale: [any AnyLiveStore]) {
        guard feedState.withLock({ $0.markStale(stale) }) else { return }
        Task {
            while let batch = feedState.withLock({ $0.nextStaleBatch() }) {
                await refresh(batch)
            }
        }
    }

    /// Re-reads stores, batched queries per table.
    func refresh(_ stale: [any AnyLiveStore]) async {
        let byType = Dictionary(grouping: stale) { ObjectIdentifier(type(of: $0)) }
        for group in byType.values {
            do {
                try await engine(for: group[0]).refresh(StoreGroup(group))
            } catch {
                report(.refreshFailed(table: group[0].shownTableName, error))
            }
        }
    }
}

extension LiveRepository: ChangeFeedReader {
    /// The most stale rows the feed's thread re-reads itself.
    static let feedThreadRefreshLimit = 64
    /// How many announced changes the feed's thread checks before handing their stale stores over.
    static let staleScanPart = 1000

    /// Re-reads the announced rows that live handles hold, on the feed's thread and connection.
    /// Rows the changes carry that live records take are applied at once; reads — here, and on
    /// the pool, which includes a live record query's read of rows it cannot take from the
    /// stream — start only once the changes are visible to them: held until then, so that a
    /// read numbered after a row the stream carried has seen it (see ``ChangeVisibility``).
    func refresh(_ changes: [Change], using feedQuery: FeedQuery, visibility: ChangeVisibility) {
        var holdsReads = visibility.isPending
        if holdsReads { sequence.holdReads() }
        /// Waits until the changes are visible (once), and lets the held reads start.
        func becomeVisible() {
            guard holdsReads else { return }
            holdsReads = false
            visibility.ensure()
            sequence.releaseReads()
        }
        defer { becomeVisible() }
        func query(_ sql: String, _ values: [SQLValue]) throws -> QueryResult {
            becomeVisible()
            return try visibility.run(sql, values, with: feedQuery)
        }
        metrics.notifications.increment(by: changes.count)
        defer {
            // From the statement to its changes applied here.
            if let earliest = changes.compactMap(\.madeAt).min() {
                metrics.lag.recordNanoseconds(Int64(max(0, Date().timeIntervalSince(earliest)) * 1_000_000_000))
            }
        }
        // Queries over records route the changed rows of their tables (read, or as the
        // replication stream carried them) and give them to the stores, in the same update as
        // their lists: those stores need no read of their own, and take no row here.
        // (The stores of another record type over such a table read their rows themselves.)
        let routedByQueries = notifyQueries(of: changes)
        let routedTables = Set(routedByQueries.map(\.table))
        let changes = routedTables.isEmpty ? changes : changes.map { routedTables.contains($0.table) ? $0.withoutRow : $0 }
        // A truncated table's stores read themselves: a query run again tells none of them its row is gone.
        let truncated = Set(changes.lazy.filter { $0.operation == .truncate }.map(\.table))
        let givenByQueries = routedByQueries.filter { !truncated.contains($0.table) }
        // A few rows: re-read here, with no hop. A burst: hand it to the pool's worker as its
        // stale stores are found, a part at a time, so the first rows are re-read while the
        // feed finds the rest — and it goes on receiving while they are.
        var stale: [any AnyLiveStore] = []
        var handedOver = false
        for start in stride(from: 0, to: changes.count, by: Self.staleScanPart) {
            let part = changes[start..<min(start + Self.staleScanPart, changes.count)]
            stale += staleStores(for: Array(part), skipping: givenByQueries)
            // Reads are held only while the first part is applied: released once the batch's
            // commits are visible, they run beside the rest of it, as reads always could (a
            // streamed row is taken only onto the version the stream delivered last).
            if stale.count > Self.feedThreadRefreshLimit || start + Self.staleScanPart < changes.count { becomeVisible() }
            if stale.count > Self.feedThreadRefreshLimit {
                scheduleRefresh(stale)
                (stale, handedOver) = ([], true)
            }
        }
        stale += staleAggregates(forChildChanges: changes, using: query)
        guard !handedOver, stale.count <= Self.feedThreadRefreshLimit else {
            becomeVisible()
            return scheduleRefresh(stale)
        }
        for group in Dictionary(grouping: stale, by: { ObjectIdentifier(type(of: $0)) }).values {
            do {
                try engine(for: group[0]).refreshOnFeed(StoreGroup(group), query)
            } catch where RereadRepair.mayPass(after: error) {
                // The feed's connection, say: read through the pool instead, which reports what fails there.
                scheduleRefresh(group)
            } catch {
                // A row that does not decode, say: reading it again would fail the same way.
                report(.refreshFailed(table: group[0].shownTableName, error))
            }
        }
    }
}

