extension LiveSchema {
    /// Adds `table` to `publication` — made, empty, if there is none — for repositories that
    /// follow changes by logical replication (``ChangeSource/logicalReplication(publication:abandonAfter:)``).
    /// Nothing is installed on the table's writes: no triggers there, no cost. `table` is spelled
    /// as SQL spells it. Idempotent; processes doing it at once are fine; a publication `FOR ALL
    /// TABLES` publishes it already. A partitioned table is
    /// published as its root (the publication's `publish_via_partition_root` is set, also on a
    /// publication made elsewhere); since `pgoutput` then leaves out a `TRUNCATE` of one of its
    /// partitions, each partition gets a trigger on `TRUNCATE` alone, which says so in the
    /// stream (a function in the `live` schema, made if need be): publish the table again after
    /// adding partitions. A role that may not make them (no `CREATE` on the database or on the
    /// `live` schema, not the partitions' owner) publishes the table without them.
    ///
    /// The table must have a primary key: a published table's UPDATEs and DELETEs fail without
    /// one (its replica identity). To do the same in a migration:
    /// `CREATE PUBLICATION live_changes WITH (publish_via_partition_root = true); ALTER PUBLICATION live_changes ADD TABLE members;`
    /// - Throws: ``PostgresError`` — for a table without a primary key, with a key column of
    ///   another type than integer, text or uuid, or published with a row filter, or for a
    ///   publication that leaves out
    ///   inserts, updates, deletes or truncates (kind ``PostgresError/Kind/invalidParameter``), or
    ///   the server's error, one line: a table that
    ///   does not exist, a role that may not create the publication or does not own the table.
    public static func publish(_ table: String, on database: Database, publication: String = ChangeFeed.defaultPublication) async throws {
        let described = try await PostgresError.namingTable(table) { try await database.transaction { connection in
            let (oid, spelled) = try await oidPinningSearchPath(of: table, connection)
            return try await connection.query("""
            SELECT $3::text,
                   EXISTS (SELECT 1 FROM pg_index WHERE indrelid = $1::int8::oid::regclass AND indisprimary)
                   AND (SELECT relreplident <> 'n' FROM pg_class WHERE oid = $1::int8::oid::regclass),
                   EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $2),
                   EXISTS (SELECT 1 FROM pg_publication_rel r JOIN pg_publication p ON p.oid = r.prpubid
                           WHERE p.pubname = $2 AND r.prrelid = $1::int8::oid::regclass),
                   (SELECT string_agg(format('%s (%s)', a.attname, format_type(a.atttypid, a.atttypmod)), ', ')
                    FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
                    WHERE i.indrelid = $1::int8::oid::regclass AND i.indisprimary
                      AND a.atttypid NOT IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype, 'text'::regtype,
                                             'varchar'::regtype, 'bpchar'::regtype, 'uuid'::regtype)),
                   (SELECT relkind = 'p' FROM pg_class WHERE oid = $1::int8::oid::regclass)
                   AND NOT coalesce((SELECT pubviaroot FROM pg_publication WHERE pubname = $2), true),
                   EXISTS (SELECT 1 FROM pg_publication_rel r JOIN pg_publication p ON p.oid = r.prpubid
                           WHERE p.pubname = $2 AND r.prrelid = $1::int8::oid::regclass AND to_jsonb(r) ->> 'prqual' IS NOT NULL),
                   coalesce((SELECT puballtables FROM pg_publication WHERE pubname = $2), false),
                   \(FollowedTables.operationsGap(publication: "$2")),
                   (SELECT relkind = 'p' FROM pg_class WHERE oid = $1::int8::oid::regclass)
            """, [oid, publication, spelled])
        } }[0]
        let (name, hasKey) = (try described.decode(String.self, at: 0), try described.decode(Bool.self, at: 1))
        guard hasKey else {
            throw PostgresError(.invalidParameter, "\(TerminalText.escaped(name, limit: 200)) has no primary key (or REPLICA IDENTITY NOTHING): not published, since its UPDATEs and DELETEs would then fail")
        }
        if try described.decode(Bool.self, at: 8) {
            throw PostgresError(.invalidParameter, "the publication \(TerminalText.name(publication, limit: 100)) leaves out some of inserts, updates, deletes and truncates, whose changes "
                                + "would never arrive: ALTER PUBLICATION \(TerminalText.name(publication, limit: 100)) SET (publish = 'insert, update, delete, truncate')")
        }
        if let columns = try described.decode(String?.self, at: 4) {
            throw PostgresError(.invalidParameter, "\(TerminalText.escaped(name, limit: 200)) has key columns of a type changes cannot name rows by (integer, text or uuid only): \(TerminalText.escaped(columns, limit: 200))")
        }
        let quoted = SQLIdentifier.quoted(publication)
        if try !described.decode(Bool.self, at: 2) {
            try await ignoringDuplicate { try await database.query("CREATE PUBLICATION \(quoted) WITH (publish_via_partition_root = true)") }
        }
        // A publication FOR ALL TABLES publishes this one already (and refuses ADD TABLE).
        let published = try described.decode(Bool.self, at: 3) || described.decode(Bool.self, at: 7)
        if !published {
            // `name` is the server's own spelling of the table (`regclass` output), quoted as needed.
            try await ignoringDuplicate { try await database.query("ALTER PUBLICATION \(quoted) ADD TABLE \(name)") }
        } else if try described.decode(Bool.self, at: 6) {
            throw PostgresError(.invalidParameter, "\(TerminalText.escaped(name, limit: 200)) is in the publication \(TerminalText.name(publication, limit: 100)) with a row filter (WHERE): "
                                + "changes of rows outside it would never arrive; publish the table whole")
        }
        // A partitioned table published as its partitions (a publication made elsewhere, as
        // `CREATE PUBLICATION` makes them) announces its changes under their names.
        if try described.decode(Bool.self, at: 5) {
            try await database.query("ALTER PUBLICATION \(quoted) SET (publish_via_partition_root = true)")
        }
        if try described.decode(Bool.self, at: 9) { try await streamPartitionTruncates(of: name, on: database) }
    }

    /// Runs `body`; an object another process created meanwhile (`duplicate_object`, or the
    /// catalog's unique index when both created it at once) is fine.
    private static func ignoringDuplicate(_ body: () async throws -> QueryResult) async throws {
        do {
            _ = try await body()
        } catch let error as PostgresError where error.sqlState == "42710" || error.sqlState == "23505" {}
    }
}
