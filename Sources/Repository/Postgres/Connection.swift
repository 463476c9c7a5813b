internal import CPostgres
import Foundation
import Synchronization

/// One connection to PostgreSQL, running on a thread of its own.
///
/// libpq blocks while it waits for the server, so every method runs on the connection's
/// dedicated thread (the actor's executor), never on Swift's cooperative pool. Statements are
/// parameterized (`$1`, `$2`…) and prepared once per connection, then reused.
///
/// Most code uses a ``Database`` pool rather than a connection directly.
public actor Connection {
    /// The configuration this connection was opened with (its description has no password).
    public nonisolated let configuration: ConnectionConfiguration

    private let executor: ThreadExecutor
    private var handle: LibpqConnection?
    private var statements = PreparedStatements()

    /// Set by the pool when the connection goes idle: the next statement first checks that the
    /// server has not closed the connection in the meantime.
    nonisolated let needsLivenessCheck = Atomic<Bool>(false)
    /// Whether the connection is open and outside any transaction, so a pool may reuse it.
    nonisolated let isReusable = Atomic<Bool>(false)
    /// Set once the connection is found lost: the pool then checks its other idle connections.
    nonisolated let wasLost = Atomic<Bool>(false)
    /// Cancels the running statement from another thread.
    nonisolated let canceller = StatementCanceller()

    /// The executor that runs this connection's methods on its own thread.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    private init(configuration: ConnectionConfiguration) {
        self.configuration = configuration
        self.executor = ThreadExecutor(name: "postgres \(configuration)")
    }

    /// Opens a connection.
    /// - Throws: ``PostgresError`` of kind ``PostgresError/Kind/connectionFailed`` with libpq's
    ///   reason (password removed) when the server cannot be reached or refuses.
    public static func connect(_ configuration: ConnectionConfiguration) async throws -> Connection {
        let connection = Connection(configuration: configuration)
        try await connection.open()
        return connection
    }

    private func open() throws {
        let pg = try openLibpqConnection(configuration)
        handle = LibpqConnection(pg)
        canceller.attach(pg)
        isReusable.store(true, ordering: .relaxed)
    }

    deinit {
        executor.shutdown()
    }

    /// Closes the connection. Statements after this throw ``PostgresError/Kind/closed``.
    public func close() {
        canceller.detach()
        handle = nil
        isReusable.store(false, ordering: .relaxed)
    }

    /// Whether the connection is open and healthy as far as libpq knows.
    public var isOpen: Bool { handle.map { PQstatus($0.pointer) == CONNECTION_OK } ?? false }

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
        try await cancellable { ticket in try await self.run(sql, values: values, ticket: ticket) }
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

    /// Runs `body` as the statement of `ticket`: a cancelled ticket's statement ends with
    /// `CancellationError`, and a connection that was sent a cancel request is not reused.
    private func asStatement<T>(_ ticket: StatementCanceller.Ticket?, _ body: () throws -> T) throws -> T {
        guard let ticket else { return try body() }
        try canceller.begin(ticket)
        let result = Result { try body() }
        let (cancelled, requestSent) = canceller.end(ticket)
        if requestSent {
            isReusable.store(false, ordering: .relaxed)
            canceller.detach()
            handle = nil
        }
        if cancelled, case .failure = result { throw CancellationError() }
        return try result.get()
    }

    private func run(_ sql: String, values: [SQLValue], ticket: StatementCanceller.Ticket?) throws -> QueryResult {
        try asStatement(ticket) { try runPrepared(sql, values: values) }
    }

    private func runScript(_ sql: String, ticket: StatementCanceller.Ticket?) throws -> QueryResult {
        try SQLText.refuseNUL(sql)
        return try asStatement(ticket) {
            let pg = try liveHandle(for: sql)
            return try result(PQexec(pg, sql), pg, sql)
        }
    }

    /// Ends a failed transaction whatever the calling task's state: a cancelled task must still
    /// roll back (if the connection was closed instead, the server rolls back on its own).
    func rollback() {
        _ = try? runScript("ROLLBACK", ticket: nil)
    }

    private func runPrepared(_ sql: String, values: [SQLValue]) throws -> QueryResult {
        try SQLText.refuseNUL(sql)
        let pg = try liveHandle(for: sql)
        let bound = try BoundParameters(values, statement: sql)
        do {
            return try executePrepared(pg, sql, bound)
        } catch let error as PostgresError where PreparedStatements.isStale(error) && PQtransactionStatus(pg) == PQTRANS_IDLE {
            // The server forgot or invalidated the statement (DISCARD ALL, a schema change):
            // prepare it again, once. Outside a transaction nothing was applied.
            statements.forget(sql)
            return try executePrepared(pg, sql, bound)
        }
    }

    private func executePrepared(_ pg: OpaquePointer, _ sql: String, _ bound: BoundParameters) throws -> QueryResult {
        let name = try preparedName(pg, sql)
        let raw = bound.withPointers { count, values, lengths, formats in
            PQexecPrepared(pg, name, count, values, lengths, formats, 1)
        }
        return try result(raw, pg, sql)
    }

    private func preparedName(_ pg: OpaquePointer, _ sql: String) throws -> String {
        if let name = statements.name(for: sql) { return name }
        if statements.isFull, PQtransactionStatus(pg) == PQTRANS_IDLE {
            _ = try result(PQexec(pg, "DEALLOCATE ALL"), pg, "DEALLOCATE ALL")
            statements.removeAll()
        }
        let name = statements.nextName()
        _ = try result(PQprepare(pg, name, sql, 0, nil), pg, sql)
        statements.remember(sql, as: name)
        return name
    }

    /// The open handle, after checking (when the pool asked for it) that the server did not
    /// close the connection while it sat idle.
    private func liveHandle(for sql: String) throws -> OpaquePointer {
        guard let pg = handle?.pointer else { throw PostgresError(.closed, "the connection is closed", statement: sql) }
        if needsLivenessCheck.exchange(false, ordering: .relaxed), !Self.isAlive(pg) {
            isReusable.store(false, ordering: .relaxed)
            wasLost.store(true, ordering: .relaxed)
            var error = PostgresError(.connectionLost, "the server closed the connection while it was idle", statement: sql)
            error.statementWasNotSent = true
            throw error
        }
        return pg
    }

    private static func isAlive(_ pg: OpaquePointer) -> Bool {
        var descriptor = pollfd(fd: PQsocket(pg), events: Int16(POLLIN), revents: 0)
        // Nothing should arrive on an idle connection; anything readable is a termination
        // message, then EOF — which libpq notices only on the read after the message.
        for _ in 0..<4 where poll(&descriptor, 1, 0) > 0 {
            if PQconsumeInput(pg) == 0 { return false }
        }
        return PQstatus(pg) == CONNECTION_OK
    }

    /// Turns a libpq result into rows, or into a ``PostgresError``; clears it either way.
    private func result(_ raw: OpaquePointer?, _ pg: OpaquePointer, _ sql: String) throws -> QueryResult {
        defer {
            PQclear(raw)
            isReusable.store(PQstatus(pg) == CONNECTION_OK && PQtransactionStatus(pg) == PQTRANS_IDLE, ordering: .relaxed)
        }
        guard let raw else { throw lostOrFailed(pg, sql) }
        switch PQresultStatus(raw) {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
            return ResultReader.read(raw)
        default:
            if PQstatus(pg) != CONNECTION_OK { throw lostOrFailed(pg, sql, raw) }
            throw ResultReader.error(raw, statement: sql, redact: configuration.redact)
        }
    }

    private func lostOrFailed(_ pg: OpaquePointer, _ sql: String, _ raw: OpaquePointer? = nil) -> PostgresError {
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
        message.split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
            .joined(separator: " ")
    }
}

/// Owns a `PGconn`: whoever drops the last reference closes it.
private final class LibpqConnection {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
    deinit { PQfinish(pointer) }
}
