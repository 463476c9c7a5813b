import Repository
import Testing

/// Runs `sql` in a transaction on its own connection to `database` and, while it holds the
/// row's lock, runs `edit`; commits once a repository's UPDATE is waiting for that lock. The
/// repository's write then finds the row at a newer version: a conflict, every time.
/// `whileWaiting` runs once that UPDATE waits, before the commit.
func commitUnderneath(_ database: Database, _ sql: String, while edit: () -> Void, whileWaiting: () -> Void = {}) async throws {
    let writer = Database(database.configuration, maximumConnections: 1)
    try await writer.transaction { connection in
        try await connection.query(sql)
        edit()
        let name = try await database.name()
        #expect(try await eventually {
            try await (name.hasPrefix("repl_") ? TestServer.streamingAdmin : TestServer.admin).value.query(
                "SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' AND query LIKE 'UPDATE%'", [name]).count == 1
        })
        whileWaiting()
    }
    writer.close()
}
