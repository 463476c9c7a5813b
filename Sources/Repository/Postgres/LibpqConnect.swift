internal import CPostgres
import Foundation

/// Opens a libpq connection, blocking the calling thread (a connection's or the feed's own).
/// - Throws: ``PostgresError`` of kind ``PostgresError/Kind/connectionFailed`` with libpq's
///   reason, password removed.
func openLibpqConnection(_ configuration: ConnectionConfiguration) throws -> OpaquePointer {
    let parameters = configuration.connectParameters()
    let pg = withCStringArrays(parameters.map(\.key), parameters.map(\.value)) { keys, values in
        PQconnectdbParams(keys, values, 1)
    }
    guard let pg, PQstatus(pg) == CONNECTION_OK else {
        let message = pg.map { String(cString: PQerrorMessage($0)) } ?? "out of memory"
        PQfinish(pg)
        var error = PostgresError(.connectionFailed, configuration.redact(Connection.tidy(message)))
        error.sqlState = ConnectFailure.sqlState(of: message)
        throw error
    }
    // Server notices (RAISE NOTICE, "arrived while idle") must not reach stderr.
    PQsetNoticeProcessor(pg, { _, _ in }, nil)
    return pg
}

/// Opens a libpq connection on a thread of its own (connecting blocks: name resolution, TLS,
/// authentication), never on Swift's cooperative pool, and switches it to non-blocking mode.
func openLibpqConnectionOffThePool(_ configuration: ConnectionConfiguration) async throws -> SocketPoller.Handed {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result {
                let pg = try openLibpqConnection(configuration)
                guard PQsetnonblocking(pg, 1) == 0 else {
                    let message = String(cString: PQerrorMessage(pg))
                    PQfinish(pg)
                    throw PostgresError(.connectionFailed, configuration.redact(Connection.tidy(message)))
                }
                return SocketPoller.Handed(pointer: pg)
            })
        }
    }
}
