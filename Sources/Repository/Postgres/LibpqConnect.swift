internal import CPostgres
import Foundation

/// Opens a libpq connection, blocking the calling thread (a connection's or the feed's own).
/// - Throws: ``PostgresError`` of kind ``PostgresError/Kind/connectionFailed`` with libpq's
///   reason, password removed — or ``PostgresError/Kind/invalidConfiguration`` where libpq
///   refused one of the settings (`sslmode=bogus`) before reaching a server.
func openLibpqConnection(_ configuration: ConnectionConfiguration) throws -> OpaquePointer {
    let parameters = configuration.connectParameters()
    let pg = withCStringArrays(parameters.map(\.key), parameters.map(\.value)) { keys, values in
        PQconnectdbParams(keys, values, 1)
    }
    guard let pg, PQstatus(pg) == CONNECTION_OK else {
        let message = pg.map { String(cString: PQerrorMessage($0)) } ?? "out of memory"
        PQfinish(pg)
        let tidy = Connection.tidy(message)
        var error = PostgresError(ConnectFailure.refusesSetting(tidy) ? .invalidConfiguration : .connectionFailed, configuration.redact(tidy))
        error.sqlState = ConnectFailure.sqlState(of: message)
        error.statementWasNotSent = true  // no connection, no statement
        throw error
    }
    // Server notices (RAISE NOTICE, "arrived while idle") must not reach stderr.
    PQsetNoticeProcessor(pg, { _, _ in }, nil)
    try useUTF8(pg, configuration)
    return pg
}

/// Has the connection talk UTF-8 when the connection string or `PGCLIENTENCODING` asked for
/// another encoding: the library sends and reads UTF-8, so text in another client encoding would
/// be stored converted twice, and read back looking right. A `SQL_ASCII` database converts
/// nothing either way, and the library checks what it reads itself: its connections are left
/// as they are. (A round trip only when another encoding was asked for.)
private func useUTF8(_ pg: OpaquePointer, _ configuration: ConnectionConfiguration) throws {
    let setting = { (name: String) in PQparameterStatus(pg, name).map { String(cString: $0) } }
    guard let client = setting("client_encoding"), client != "UTF8", setting("server_encoding") != "SQL_ASCII" else { return }
    guard PQsetClientEncoding(pg, "UTF8") == 0 else {
        let message = String(cString: PQerrorMessage(pg))
        PQfinish(pg)
        throw PostgresError(.connectionFailed, "could not set the client encoding to UTF8 (it was \(client)): \(configuration.redact(Connection.tidy(message)))")
    }
}

/// Opens a libpq connection on a thread of its own (connecting blocks: name resolution, TLS,
/// authentication), never on Swift's cooperative pool, and switches it to non-blocking mode.
/// Cancelling the task ends the wait at once with `CancellationError`: the thread goes on to
/// the end of its attempt (libpq's blocking connect cannot be interrupted) and closes what it opened.
func openLibpqConnectionOffThePool(_ configuration: ConnectionConfiguration) async throws -> SocketPoller.Handed {
    let attempt = ConnectAttempt()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            guard attempt.start(continuation) else { return continuation.resume(throwing: CancellationError()) }
            Thread.detachNewThread {
                let outcome = Result {
                    let pg = try openLibpqConnection(configuration)
                    guard PQsetnonblocking(pg, 1) == 0 else {
                        let message = String(cString: PQerrorMessage(pg))
                        PQfinish(pg)
                        throw PostgresError(.connectionFailed, configuration.redact(Connection.tidy(message)))
                    }
                    return SocketPoller.Handed(pointer: pg)
                }
                guard let waiting = attempt.finish() else {
                    if case .success(let handed) = outcome { PQfinish(handed.pointer) }  // nobody waits for it any more
                    return
                }
                waiting.resume(with: outcome)
            }
        }
    } onCancel: {
        attempt.cancel()?.resume(throwing: CancellationError())
    }
}

/// Who waits for a connection being opened: the waiting task until it is resumed — by the
/// attempt's end or by its cancellation, whichever comes first.
private final class ConnectAttempt: Sendable {
    /// A leaf lock, taken by the waiting task, the connect thread or the cancellation handler
    /// with no other lock held; continuations are resumed after it is released.
    private let state = Locked<(waiting: CheckedContinuation<SocketPoller.Handed, any Error>?, cancelled: Bool)>((nil, false))

    /// The task waits: false when it was cancelled already.
    func start(_ continuation: CheckedContinuation<SocketPoller.Handed, any Error>) -> Bool {
        state.withLock { state in
            guard !state.cancelled else { return false }
            state.waiting = continuation
            return true
        }
    }

    /// The attempt ended: the task to resume, nil when it was resumed by its cancellation.
    func finish() -> CheckedContinuation<SocketPoller.Handed, any Error>? {
        state.withLock { state in
            defer { state.waiting = nil }
            return state.waiting
        }
    }

    /// The task was cancelled: the continuation to resume with the cancellation, if it waits.
    func cancel() -> CheckedContinuation<SocketPoller.Handed, any Error>? {
        state.withLock { state in
            state.cancelled = true
            defer { state.waiting = nil }
            return state.waiting
        }
    }
}
