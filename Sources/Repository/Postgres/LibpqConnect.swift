internal import CPostgres

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
        throw PostgresError(.connectionFailed, configuration.redact(Connection.tidy(message)))
    }
    // Server notices (RAISE NOTICE, "arrived while idle") must not reach stderr.
    PQsetNoticeProcessor(pg, { _, _ in }, nil)
    return pg
}
