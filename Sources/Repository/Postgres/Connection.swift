internal import CPostgres
import Foundation
import Synchronization

/// One connection to PostgreSQL.
///
/// A statement is sent with libpq's non-blocking API from the calling task; while the server
/// works, the task is suspended and the shared socket poller thread waits for the answer, so
/// no thread of Swift's cooperative pool ever blocks on the network. Statements on one
/// connection run one at a time, in the order they were called. They are parameterized
/// (`$1`, `$2`…) and prepared once per connection, then reused.
///
/// Most code uses a ``Database`` pool rather than a connection directly.
public actor Connection {
    /// The configuration this connection was opened with (its description has no password).
    public nonisolated let configuration: ConnectionConfiguration

    var handle: LibpqConnection?
    var statements = PreparedStatements()
    private var turns = StatementTurns()
    var wasOpenAfterLastStatement = true
    /// The tasks whose `transaction` scopes are open here, outermost first (see ``transaction(_:)``).
    var transactionScopes: [Int?] = []
    /// Waits for this connection's results.
    let poller: SocketPoller

    /// Whether the server ended the connection while it sat idle (the pool asks before reusing it).
    nonisolated let idleCheck: IdleCheck
    /// Whether the connection is open and outside any transaction, so a pool may reuse it.
    nonisolated let isReusable = Atomic<Bool>(false)
    /// Whether the connection sits idle in a pool, handed back: a statement on it then comes from
    /// a reference kept past its checkout (a transaction's body that kept its connection), and
    /// is refused — it would run outside that transaction, or inside the next one's. Set and
    /// cleared under the pool's lock (``PoolState``).
    nonisolated let isIdleInPool = Atomic<Bool>(false)
    /// Set once the connection is found lost: the pool then checks its other idle connections.
    nonisolated let wasLost = Atomic<Bool>(false)
    /// Cancels the running statement from another thread.
    nonisolated let canceller = StatementCanceller()
    /// The database's types this library does not know by OID (shared by a pool's connections).
    nonisolated let types: TypeCatalog

    private init(configuration: ConnectionConfiguration, pg: OpaquePointer, poller: SocketPoller, types: TypeCatalog) {
        self.configuration = configuration
        self.poller = poller
        self.types = types
        let handle = LibpqConnection(pg)
        self.handle = handle
        idleCheck = handle.idleCheck
        let connection = SocketPoller.Handed(pointer: pg), socket = PQsocket(pg)
        canceller.attach(pg) { stillRunning in poller.abandon(connection, socket: socket, if: stillRunning) }
        isReusable.store(true, ordering: .relaxed)
    }

    /// Opens a connection.
    /// - Throws: ``PostgresError`` of kind ``PostgresError/Kind/connectionFailed`` with libpq's
    ///   reason (password removed) when the server cannot be reached or refuses.
    public static func connect(_ configuration: ConnectionConfiguration) async throws -> Connection {
        try await connect(configuration, poller: .shared)
    }

    /// Opens a connection whose results `poller` waits for (tests try each ``ReadinessSource``).
    static func connect(_ configuration: ConnectionConfiguration, poller: SocketPoller, types: TypeCatalog = TypeCatalog()) async throws -> Connection {
        let pg = try await openLibpqConnectionOffThePool(configuration)
        return Connection(configuration: configuration, pg: pg.pointer, poller: poller, types: types)
    }

    /// Closes the connection. Statements after this throw ``PostgresError/Kind/closed``.
    public func close() {
        canceller.detach()
        handle = nil
        isReusable.store(false, ordering: .relaxed)
    }

    /// Whether the connection is open and healthy as far as libpq knows.
    /// (As of its last statement: while one runs, the poller's thread may be using libpq's
    /// connection.)
    public var isOpen: Bool { handle != nil && wasOpenAfterLastStatement }

    /// Runs one statement with parameters `$1`, `$2`… and returns its rows.
    ///
    /// The statement is prepared on first use and reused after, so repeat the same SQL text
    /// with different parameters rather than building SQL strings. Cancelling the calling task
    /// asks the server to stop the statement and throws `CancellationError` (the connection is
    /// then closed rather than reused).
    @discardableResult
    public nonisolated func query(_ sql: String, _ parameters: [any SQLValueConvertible] = []) async throws -> QueryResult {
        try await query(sql, values: parameters.map(\.sqlValue))
    }

    /// Runs one statement with already converted parameters; cancellable like
    /// ``query(_:_:)``.
    @discardableResult
    public nonisolated func query(_ sql: String, values: [SQLValue]) async throws -> QueryResult {
        try await query(sql, values: values, marked: false)
    }

    /// Runs one statement; `marked`, behind a marker whose answer tells whether the server ended
    /// the connection before starting it (see ``executeMarked(_:_:_:_:)``) — for a pool that
    /// runs such a statement again elsewhere.
    nonisolated func query(_ sql: String, values: [SQLValue], marked: Bool) async throws -> QueryResult {
        try await cancellable { ticket in try await self.run(sql, values: values, marked: marked, ticket: ticket) }
    }

    /// Runs exactly one statement with no parameters, through the extended protocol: text the
    /// server reads as several commands is refused (42601) rather than run — for a statement
    /// split from a script, where the splitter and the server must agree on where it ends.
    nonisolated func execute(statement sql: String) async throws {
        _ = try await cancellable { ticket in try await self.runScript(sql, ticket: ticket, oneCommand: true) }
    }

    /// Runs SQL text with no parameters through the simple protocol: several statements
    /// separated by `;` are allowed (migrations, DDL). Returns the last statement's result.
    /// Cancellable like ``query(_:_:)``.
    @discardableResult
    public nonisolated func execute(script sql: String) async throws -> QueryResult {
        try await cancellable { ticket in try await self.runScript(sql, ticket: ticket) }
    }

    /// Runs `body` with a ticket that the calling task's cancellation cancels.
    private nonisolated func cancellable<T: Sendable>(_ body: (StatementCanceller.Ticket) async throws -> T) async throws -> T {
        try Task.checkCancellation()
        let ticket = StatementCanceller.Ticket()
        return try await withTaskCancellationHandler {
            try await body(ticket)
        } onCancel: {
            canceller.cancel(ticket)
        }
    }

    /// Runs `body` as the statement of `ticket`, after the statements called before it: a
    /// cancelled ticket's statement ends with `CancellationError`, and a connection that was
    /// sent a cancel request is not reused.
    func asStatement<T>(_ ticket: StatementCanceller.Ticket?, _ sql: String?, _ body: () async throws -> T) async throws -> T {
        if isIdleInPool.load(ordering: .relaxed) {
            var error = PostgresError(.closed, "this connection was handed back to its pool when its transaction or withConnection body ended: run statements on it inside that body", statement: sql)
            error.statementWasNotSent = true
            throw error
        }
        if !turns.take() { await withCheckedContinuation { turns.enqueue($0) } }
        defer { turns.pass()?.resume() }
        guard let ticket else { return try await body() }
        try canceller.begin(ticket)
        let result: Result<T, any Error>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        let (cancelled, requestSent) = canceller.end(ticket)
        if requestSent {
            isReusable.store(false, ordering: .relaxed)
            canceller.detach()
            handle = nil
        }
        if cancelled, case .failure(let error) = result {
            // A COMMIT whose answer was lost may have committed: a CancellationError would hide that.
            if let lost = error as? PostgresError, lost.kind == .connectionLost, lost.statement == "COMMIT" { throw lost }
            throw CancellationError()
        }
        return try result.get()
    }

    private func run(_ sql: String, values: [SQLValue], marked: Bool, ticket: StatementCanceller.Ticket?) async throws -> QueryResult {
        try await asStatement(ticket, sql) { await describe(try await runPrepared(sql, values: values, marked: marked)) }
    }

    /// `result` with the types of its columns described (see ``TypeCatalog``): a type not yet
    /// known is looked up here, once for the pool. A failed lookup leaves the types undescribed.
    func describe(_ result: QueryResult) async -> QueryResult {
        guard let missing = types.missing(in: result) else { return result }
        if !missing.isEmpty, let rows = try? await runPrepared(TypeCatalog.lookup, values: [TypeCatalog.parameter(missing)]) {
            types.record(rows)
        }
        return types.described(result)
    }

    /// Runs `sql` through the simple protocol, or — `oneCommand` — the extended one, which
    /// refuses text holding more than one command.
    private func runScript(_ sql: String, ticket: StatementCanceller.Ticket?, oneCommand: Bool = false) async throws -> QueryResult {
        try SQLText.refuseNUL(sql)
        return try await asStatement(ticket, sql) {
            let connection = try liveConnection(for: sql)
            return try await command(connection, sql) { oneCommand ? PQsendQueryParams($0, sql, 0, nil, nil, nil, nil, 0) : PQsendQuery($0, sql) }
        }
    }

    /// Ends a failed transaction whatever the calling task's state: a cancelled task must still
    /// roll back (if the connection was closed instead, the server rolls back on its own).
    func rollback() async {
        _ = try? await runScript("ROLLBACK", ticket: nil)
    }

    /// Undoes what was done since `savepoint` (a name this library made), whatever the
    /// calling task's state, as ``rollback()`` does for a transaction.
    func rollback(to savepoint: String) async {
        _ = try? await runScript("ROLLBACK TO SAVEPOINT \(savepoint)", ticket: nil)
    }

    /// The open connection.
    func liveConnection(for sql: String) throws -> LibpqConnection {
        guard let connection = handle else { throw PostgresError(.closed, "the connection is closed", statement: sql) }
        return connection
    }

    /// Sends one command with `send` (a `PQsend…` call), waits for its results without blocking
    /// a thread, and returns the last one — or throws the first error. `connection` stays
    /// referenced, so open, until the command is over.
    func command(_ connection: LibpqConnection, _ sql: String, send: (OpaquePointer) -> Int32) async throws -> QueryResult {
        let pg = connection.pointer
        guard send(pg) == 1 else {
            isReusable.store(false, ordering: .relaxed)
            throw lostOrFailed(pg, sql)
        }
        let outcome = try await collectResults(connection, sql)
        noteStateAfterStatement(connection)
        guard let outcome else { throw lostOrFailed(pg, sql) }
        return try settle(outcome, on: pg).get()
    }

    /// A server error that came before the connection closed (a terminated backend, a
    /// shutdown) means the connection was lost, as libpq now knows.
    func settle(_ outcome: Result<QueryResult, PostgresError>, on pg: OpaquePointer) -> Result<QueryResult, PostgresError> {
        guard !wasOpenAfterLastStatement, case .failure(var error) = outcome else { return outcome }
        error.kind = .connectionLost
        wasLost.store(true, ordering: .relaxed)
        return .failure(error)
    }

    /// Whether the connection is open, and reusable, after a statement. Closed meanwhile
    /// (close() runs while a statement waits): not reusable, whatever libpq says.
    func noteStateAfterStatement(_ connection: LibpqConnection) {
        let pg = connection.pointer
        wasOpenAfterLastStatement = PQstatus(pg) == CONNECTION_OK
        isReusable.store(handle === connection && wasOpenAfterLastStatement && PQtransactionStatus(pg) == PQTRANS_IDLE
                         && PQpipelineStatus(pg) == PQ_PIPELINE_OFF, ordering: .relaxed)
    }

    /// Drops a connection that cannot go on, and says so.
    func abandon(_ connection: LibpqConnection, _ sql: String) -> PostgresError {
        if handle === connection {
            canceller.detach()
            handle = nil
        }
        // Only this connection: unlike a lost one, it says nothing of the pool's others.
        isReusable.store(false, ordering: .relaxed)
        wasOpenAfterLastStatement = false
        let message = sql == "COMMIT"
            ? "the connection stopped answering after COMMIT was sent: the transaction may or may not have committed"
            : "the connection stopped answering while a statement waited"
        return PostgresError(.connectionLost, message, statement: sql)
    }

    func lostOrFailed(_ pg: OpaquePointer, _ sql: String, _ raw: OpaquePointer? = nil) -> PostgresError {
        var error = raw.map { ResultReader.error($0, statement: sql, redact: configuration.redact) }
            ?? PostgresError(.server, configuration.redact(Self.tidy(String(cString: PQerrorMessage(pg)))), statement: sql)
        if PQstatus(pg) != CONNECTION_OK {
            error.kind = .connectionLost
            wasLost.store(true, ordering: .relaxed)
        }
        return error
    }

    /// libpq messages end with newlines and indent continuation lines with tabs.
    static func tidy(_ message: String) -> String {
        let lines = message.split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        // libpq's lines are sentences of their own ("… failed: Connection refused" and "Is the
        // server running …?"): joined, one that ends without punctuation takes a semicolon.
        return zip(lines.indices, lines).map { index, line in
            index == lines.count - 1 || line.last.map { ".:;,?!".contains($0) } == true ? line : line + ";"
        }.joined(separator: " ")
    }
}

/// Owns a `PGconn`: whoever drops the last reference closes it.
final class LibpqConnection {
    let pointer: OpaquePointer
    /// Held as long as the `PGconn`: libpq's notice receiver points to it.
    let idleCheck: IdleCheck
    init(_ pointer: OpaquePointer) {
        self.pointer = pointer
        idleCheck = IdleCheck(pointer)
    }
    deinit { PQfinish(pointer) }
}
