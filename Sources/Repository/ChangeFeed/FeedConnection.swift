internal import CPostgres
import Foundation

/// The change feed's connection: LISTENs, and runs the feed's own statements — pings and
/// re-reads — each with a deadline, through libpq's non-blocking API, so that a silent network
/// partition ends a statement instead of hanging the feed's thread. Used by one thread only.
final class FeedConnection {
    let pg: OpaquePointer
    private let redact: @Sendable (String) -> String
    /// Statements prepared on this connection, and how many names were given out.
    private var prepared: [String: String] = [:]
    private var namesGiven = 0
    /// The database's types not known here by OID (the pool's, when a live repository listens).
    private let types: TypeCatalog
    /// A descriptor that becomes readable when the feed stops (its wake-up pipe): a statement
    /// waiting for its answer then is cancelled, and throws — making a replication slot can
    /// wait a minute for the transactions running on the server.
    private let stop: Int32

    /// Connects and listens on `channel`, if any (blocking; libpq's `connect_timeout` bounds it).
    /// Statements end early, cancelled, once `stop` is readable.
    init(_ configuration: ConnectionConfiguration, channel: String?, deadline: Duration, types: TypeCatalog, stop: Int32 = -1) throws {
        pg = try openLibpqConnection(configuration)
        self.types = types
        self.stop = stop
        redact = { configuration.redact($0) }
        guard let channel else { return }
        // A throw from here on, with every property set, runs deinit, which finishes `pg`: finishing
        // it here too freed it twice, and the second PQfinish closed whatever descriptor had
        // taken the old socket's number — another connection's, mid-statement.
        try execute("LISTEN \(SQLIdentifier.quoted(channel))", deadline: deadline)
    }

    deinit { PQfinish(pg) }

    var socket: Int32 { PQsocket(pg) }
    var isHealthy: Bool { PQstatus(pg) == CONNECTION_OK }
    var errorMessage: String { redact(Connection.tidy(String(cString: PQerrorMessage(pg)))) }

    /// Asks the server whether the connection still works, waiting at most `deadline`.
    func ping(deadline: Duration) -> Bool {
        (try? run("SELECT 1", deadline: deadline) { PQsendQuery($0, "SELECT 1") }) != nil && isHealthy
    }

    /// Runs `sql` by the simple query protocol (the only one a replication connection speaks),
    /// within `deadline`.
    @discardableResult
    func execute(_ sql: String, deadline: Duration) throws -> QueryResult {
        try run(sql, deadline: deadline) { PQsendQuery($0, sql) }
    }

    /// Sends `sql` (`START_REPLICATION`) and waits, at most `deadline`, until the server switches
    /// to streaming (`COPY BOTH`).
    func startStreaming(_ sql: String, deadline: Duration) throws {
        try SQLText.refuseNUL(sql)
        let end = ContinuousClock.now + deadline
        PQsetnonblocking(pg, 1)
        guard PQsendQuery(pg, sql) == 1 else { throw lost(sql) }
        while PQflush(pg) == 1 {
            guard try wait(for: Int16(POLLIN | POLLOUT), until: end, sql) else { throw timedOut(sql, deadline) }
            if PQconsumeInput(pg) == 0 { throw lost(sql) }
        }
        guard let result = try nextResult(sql, until: end, deadline: deadline) else { throw lost(sql) }
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COPY_BOTH else {
            // Refused (the slot is gone, say): the command is over only once its results are all
            // read — until then libpq refuses the next one, the new slot's creation.
            while let rest = try nextResult(sql, until: end, deadline: deadline) { PQclear(rest) }
            throw ResultReader.error(result, statement: sql, redact: redact)
        }
    }

    /// The next result of the command under way, once it has arrived (nil: the command is
    /// over), waiting at most until `end`.
    private func nextResult(_ sql: String, until end: ContinuousClock.Instant, deadline: Duration) throws -> OpaquePointer? {
        while PQisBusy(pg) == 1 {
            guard try wait(for: Int16(POLLIN), until: end, sql) else { throw timedOut(sql, deadline) }
            if PQconsumeInput(pg) == 0 { throw lost(sql) }
        }
        return PQgetResult(pg)
    }

    /// Runs a statement with parameters, prepared once per connection, within `deadline`.
    /// Its columns' types are described (see ``TypeCatalog``), looked up here if need be.
    func query(_ sql: String, _ values: [SQLValue], deadline: Duration) throws -> QueryResult {
        types.describing(try prepared(sql, values, deadline: deadline)) { try prepared($0, $1, deadline: deadline) }
    }

    private func prepared(_ sql: String, _ values: [SQLValue], deadline: Duration) throws -> QueryResult {
        let bound = try BoundParameters(values, statement: sql)
        let execute = { (name: String) in
            try self.run(sql, deadline: deadline) { pg in
                bound.withPointers { count, values, lengths, formats in
                    PQsendQueryPrepared(pg, name, count, values, lengths, formats, 1)
                }
            }
        }
        let name = try preparedName(sql, deadline: deadline)
        do {
            return try execute(name)
        } catch let error as PostgresError where PreparedStatements.isStale(error) {
            // The table changed under the statement (`SELECT *` after ALTER TABLE … ADD COLUMN):
            // prepared again, once, as the pool's connections do. Nothing was applied. In a
            // transaction, which has failed, it is forgotten (its name stays allocated), and
            // prepared anew when its caller runs the transaction again.
            prepared[sql] = nil
            guard PQtransactionStatus(pg) == PQTRANS_IDLE else { throw error }
            _ = try? run("DEALLOCATE \(name)", deadline: deadline) { PQsendQuery($0, "DEALLOCATE \(name)") }
            return try execute(try preparedName(sql, deadline: deadline))
        }
    }

    private func preparedName(_ sql: String, deadline: Duration) throws -> String {
        if let name = prepared[sql] { return name }
        namesGiven += 1
        let name = "live_feed\(namesGiven)"
        _ = try run(sql, deadline: deadline) { PQsendPrepare($0, name, sql, 0, nil) }
        prepared[sql] = name
        return name
    }

    /// Sends with `send`, then reads results until the statement is done, at most `deadline`
    /// from now. Notifications that arrive meanwhile stay buffered for `PQnotifies`.
    /// - Throws: ``PostgresError`` — the server's error, or `connectionLost` when the
    ///   connection failed or the deadline passed (the connection is then unusable).
    private func run(_ sql: String, deadline: Duration, _ send: (OpaquePointer) -> Int32) throws -> QueryResult {
        try SQLText.refuseNUL(sql)
        let end = ContinuousClock.now + deadline
        PQsetnonblocking(pg, 1)
        guard send(pg) == 1 else { throw lost(sql) }
        // Flush what is sent (PQflush: 1 while data remains), then wait for the whole result.
        while true {
            let flushed = PQflush(pg)
            if flushed < 0 { throw lost(sql) }
            if flushed == 0 { break }
            guard try wait(for: Int16(POLLIN | POLLOUT), until: end, sql) else { throw timedOut(sql, deadline) }
            if PQconsumeInput(pg) == 0 { throw lost(sql) }
        }
        var last: OpaquePointer?
        defer { PQclear(last) }
        while let next = try nextResult(sql, until: end, deadline: deadline) {
            PQclear(last)
            last = next
        }
        guard let last, [PGRES_TUPLES_OK, PGRES_COMMAND_OK].contains(PQresultStatus(last)) else {
            throw last.map { ResultReader.error($0, statement: sql, redact: redact) } ?? lost(sql)
        }
        return ResultReader.read(last)
    }

    /// Waits until the socket is ready for `events`; false once `end` passes.
    /// - Throws: kind ``PostgresError/Kind/closed`` when the feed stops meanwhile: `sql` is
    ///   cancelled first.
    private func wait(for events: Int16, until end: ContinuousClock.Instant, _ sql: String) throws -> Bool {
        let remaining = ConnectionConfiguration.milliseconds(ContinuousClock.now.duration(to: end))
        guard remaining > 0 else { return false }
        var descriptors = [pollfd(fd: PQsocket(pg), events: events, revents: 0), pollfd(fd: stop, events: Int16(POLLIN), revents: 0)]
        let ready = poll(&descriptors, 2, Int32(clamping: remaining))
        guard descriptors[1].revents == 0 else {
            cancelRunningStatement()
            throw PostgresError(.closed, "the change feed stopped", statement: sql)
        }
        return ready > 0
    }

    /// Asks the server to cancel the statement under way, and waits (a second at most) for it
    /// to end, so that what it held — a replication slot being made — is released before the
    /// connection closes.
    private func cancelRunningStatement() {
        if let cancel = PQgetCancel(pg) {
            var message = [CChar](repeating: 0, count: 256)
            _ = BrokenPipeGuard.run { PQcancel(cancel, &message, Int32(message.count)) }
            PQfreeCancel(cancel)
        }
        let end = ContinuousClock.now + .seconds(1)
        while PQisBusy(pg) == 1 {
            var descriptor = pollfd(fd: PQsocket(pg), events: Int16(POLLIN), revents: 0)
            let remaining = ConnectionConfiguration.milliseconds(ContinuousClock.now.duration(to: end))
            guard remaining > 0, poll(&descriptor, 1, Int32(clamping: remaining)) > 0, PQconsumeInput(pg) != 0 else { return }
        }
        while let result = PQgetResult(pg) { PQclear(result) }
    }

    private func lost(_ sql: String) -> PostgresError {
        let message = errorMessage
        return PostgresError(.connectionLost, message.isEmpty ? "the change feed's connection failed" : message, statement: sql)
    }

    private func timedOut(_ sql: String, _ deadline: Duration) -> PostgresError {
        PostgresError(.connectionLost, "the server did not answer within \(deadline) (a network partition?)", statement: sql)
    }
}
