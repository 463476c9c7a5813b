extension LiveSchema {
    /// The function behind ``streamPartitionTruncates(of:on:)``'s triggers: for each partitioned
    /// table above the truncated partition, a transactional logical message naming it as stores
    /// name tables (`schema.name`) — the stream names a partition's rows by its top-most
    /// published ancestor, which may be any of them; the replication stream takes each message
    /// as a truncate of that table, and a table nobody follows is nothing. It runs as whoever
    /// truncates, so its `search_path` is fixed (no operator of theirs is called).
    static let partitionTruncateFunction = """
        CREATE OR REPLACE FUNCTION live.stream_partition_truncate() RETURNS trigger LANGUAGE plpgsql
        SET search_path = pg_catalog, pg_temp AS $$
        DECLARE
            ancestor text;
        BEGIN
            FOR ancestor IN SELECT format('%s.%s', n.nspname, c.relname) FROM pg_partition_ancestors(TG_RELID) AS a
                            JOIN pg_class c ON c.oid = a.relid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE a.relid <> TG_RELID LOOP
                PERFORM pg_logical_emit_message(true, '\(ReplicationStream.partitionTruncated)', ancestor);
            END LOOP;
            RETURN NULL;
        END
        $$;
        """

    /// Has a `TRUNCATE` of each partition of `table` (a partitioned table, named as the server
    /// spells it) write a logical message: published as its root, a partition's own `TRUNCATE`
    /// is left out of the stream by `pgoutput`, and its rows would stay in live values. Only
    /// `TRUNCATE` fires the trigger: writes cost nothing more. Partitions that have the trigger
    /// are left as they are (no lock on them); partitions added later need
    /// ``publish(_:on:publication:)`` again.
    ///
    /// A role that may not make the function (no `CREATE` on the database for the `live`
    /// schema, or on that schema) or may not add triggers to the partitions publishes the table
    /// all the same, without them: this returns whether every partition has its trigger.
    @discardableResult
    static func streamPartitionTruncates(of table: String, on database: Database) async throws -> Bool {
        do {
            try await database.transaction { connection in
                let oid = try await oidPinningSearchPath(of: table, connection).oid
                try await connection.query("SELECT pg_advisory_xact_lock($1::int8)", [lockKey])
                let present = try await connection.query("""
                    SELECT to_regnamespace('live') IS NOT NULL,
                           EXISTS (SELECT 1 FROM pg_proc WHERE oid = to_regprocedure('live.stream_partition_truncate()') AND prosrc LIKE '%pg_partition_ancestors%')
                    """)[0]
                if try !present.decode(Bool.self, at: 0) { try await connection.execute(script: "CREATE SCHEMA IF NOT EXISTS live") }
                if try !present.decode(Bool.self, at: 1) { try await connection.execute(script: partitionTruncateFunction) }
                let missing = try await connection.query("""
                    SELECT p.relid::regclass::text FROM pg_partition_tree($1::int8::oid::regclass) AS p
                    WHERE p.relid <> $1::int8::oid::regclass AND NOT EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = p.relid AND t.tgname = 'live_stream_truncate')
                    """, [oid])
                for row in missing {
                    let partition = try row.decode(String.self, at: 0)  // the server's spelling, quoted as needed
                    try await connection.execute(script: "CREATE TRIGGER live_stream_truncate AFTER TRUNCATE ON \(partition) FOR EACH STATEMENT EXECUTE FUNCTION live.stream_partition_truncate()")
                }
            }
            return true
        } catch let error as PostgresError where error.sqlState == "42501" {
            return false  // insufficient privilege: published without them (README says what that costs)
        }
    }
}
