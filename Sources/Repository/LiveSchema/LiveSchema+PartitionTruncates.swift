extension LiveSchema {
    /// The function behind ``streamPartitionTruncates(of:on:)``'s triggers: it writes a
    /// transactional logical message naming the partition's root as stores name tables
    /// (`schema.name`), which the replication stream takes as a truncate of that table.
    static let partitionTruncateSQL = """
        CREATE SCHEMA IF NOT EXISTS live;
        CREATE OR REPLACE FUNCTION live.stream_partition_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_catalog.pg_logical_emit_message(true, '\(ReplicationStream.partitionTruncated)',
                (SELECT n.nspname || '.' || c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                 WHERE c.oid = pg_catalog.pg_partition_root(TG_RELID)));
            RETURN NULL;
        END
        $$;
        """

    /// Has a `TRUNCATE` of each partition of `table` (a partitioned table, named as the server
    /// spells it) write a logical message: published as its root, a partition's own `TRUNCATE`
    /// is left out of the stream by `pgoutput`, and its rows would stay in live values. Only
    /// `TRUNCATE` fires the trigger: writes cost nothing more. Partitions added later need
    /// ``publish(_:on:publication:)`` again.
    static func streamPartitionTruncates(of table: String, on database: Database) async throws {
        try await database.transaction { connection in
            try await connection.query("SELECT pg_advisory_xact_lock($1)", [lockKey])
            try await connection.execute(script: partitionTruncateSQL)
            let partitions = try await connection.query("SELECT relid::regclass::text FROM pg_partition_tree($1::regclass) WHERE relid <> $1::regclass", [table])
            for row in partitions {
                let partition = try row.decode(String.self, at: 0)  // the server's spelling, quoted as needed
                try await connection.execute(script: """
                    DROP TRIGGER IF EXISTS live_stream_truncate ON \(partition);
                    CREATE TRIGGER live_stream_truncate AFTER TRUNCATE ON \(partition) FOR EACH STATEMENT EXECUTE FUNCTION live.stream_partition_truncate();
                    """)
            }
        }
    }
}
