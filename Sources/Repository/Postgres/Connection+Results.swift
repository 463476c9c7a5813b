internal import CPostgres

extension Connection {
    /// Waits, without blocking a thread, for the results of the statement sent last and takes
    /// them until libpq says it is done (`PQgetResult` returns nil): the last result, the first
    /// error, or nil when none came (the connection failed). Throws when the connection cannot
    /// go on: it stopped answering, or the statement started a COPY.
    func collectResults(_ connection: LibpqConnection, _ sql: String) async throws -> Result<QueryResult, PostgresError>? {
        var outcome: Result<QueryResult, PostgresError>?
        while let raw = try await nextResult(connection, sql) {
            defer { PQclear(raw) }
            switch PQresultStatus(raw) {
            case PGRES_TUPLES_OK, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
                if case .failure = outcome { continue }  // the first error stands
                outcome = .success(ResultReader.read(raw))
            case PGRES_COPY_IN, PGRES_COPY_OUT, PGRES_COPY_BOTH:
                // COPY needs a protocol of its own; leave the connection rather than half in it.
                handle = nil
                isReusable.store(false, ordering: .relaxed)
                throw PostgresError(.server, "COPY is not supported here; the connection was closed", statement: sql)
            default:
                if case .failure = outcome { continue }
                outcome = .failure(PQstatus(connection.pointer) == CONNECTION_OK
                    ? ResultReader.error(raw, statement: sql, redact: configuration.redact)
                    : lostOrFailed(connection.pointer, sql, raw))
            }
        }
        return outcome
    }

    /// libpq's next result once it can be taken without blocking (nil: the statement is done).
    /// Still busy after the wait, the connection is given up (`PQgetResult` would block).
    func nextResult(_ connection: LibpqConnection, _ sql: String) async throws -> OpaquePointer? {
        let pg = connection.pointer
        if PQisBusy(pg) != 0 || PQflush(pg) != 0 {
            await poller.awaitResults(of: pg)
            // The wait ended without an answer (the socket could not be watched, or reading
            // failed on a connection libpq still calls open).
            if PQisBusy(pg) != 0 { throw abandon(connection, sql) }
        }
        return PQgetResult(pg)
    }
}
