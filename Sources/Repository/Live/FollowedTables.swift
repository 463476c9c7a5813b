/// Which tables a repository learns the changes of: those with the announcement triggers
/// (``LiveSchema/enable(_:on:)``) when it listens to notifications, those in its publication
/// (``LiveSchema/publish(_:on:publication:)``) when it follows logical replication. A live
/// value over any other table would never follow other processes, so it is refused.
enum FollowedTables {
    /// Why a table's changes do not reach a repository.
    enum Gap: String {
        /// No triggers (notifications), or not in the publication.
        case missing
        /// Partitioned, and published as its partitions (a publication without
        /// `publish_via_partition_root`): its changes arrive under the partitions' names.
        case partitions
        /// Published with a row filter (PostgreSQL 15's `WHERE`): changes of the rows outside
        /// it never arrive.
        case rowFilter = "filter"
        /// The publication leaves out some operations (`publish = 'insert, update'`): those
        /// changes never arrive.
        case operations
        /// The table is gone (dropped, or renamed).
        case dropped
    }

    /// A checked table: its name as announcements give it, as messages show it
    /// (``RecordTable/shownName``), and why its changes are not all announced (nil: they are).
    typealias Checked = (name: String, shown: String, gap: Gap?)

    /// Each of `relations` (names the server parses as `regclass`; a partition stands for its
    /// partitioned root) as announcements name it, and why `source` does not announce all its
    /// changes (nil: it does).
    static func check(_ relations: [String], source: ChangeSource, on database: Database) async throws -> [Checked] {
        let gap: String
        var parameters = [SQLValue.text(ArrayLiteral.string(from: relations.map(SQLValue.text)))]
        switch source {
        case .notifications:
            gap = "CASE WHEN NOT EXISTS (SELECT FROM pg_trigger t WHERE t.tgrelid = c.oid AND t.tgname = 'live_announce_update') THEN 'missing' END"
        case .logicalReplication(let publication, _):
            // The row filter through jsonb: the column is PostgreSQL 15's.
            gap = """
                CASE WHEN NOT EXISTS (SELECT FROM pg_publication_tables p WHERE p.pubname = $2 AND p.schemaname = n.nspname AND p.tablename = c.relname)
                     THEN CASE WHEN c.relkind = 'p' AND EXISTS (SELECT FROM pg_publication_tables p
                               JOIN pg_namespace pn ON pn.nspname = p.schemaname JOIN pg_class pc ON pc.relnamespace = pn.oid AND pc.relname = p.tablename
                               WHERE p.pubname = $2 AND pg_partition_root(pc.oid) = c.oid) THEN 'partitions' ELSE 'missing' END
                     WHEN EXISTS (SELECT FROM pg_publication_tables p WHERE p.pubname = $2 AND p.schemaname = n.nspname AND p.tablename = c.relname
                                  AND to_jsonb(p) ->> 'rowfilter' IS NOT NULL) THEN 'filter'
                     WHEN \(operationsGap(publication: "$2")) THEN 'operations'
                END
                """
            parameters.append(.text(publication))
        }
        return try await database.query("""
            SELECT n.nspname || '.' || c.relname, n.nspname, c.relname, \(gap)
            FROM unnest($1::text[]) AS r(name)
            JOIN pg_class c ON c.oid = coalesce(pg_partition_root(r.name::regclass), r.name::regclass)
            JOIN pg_namespace n ON n.oid = c.relnamespace
            """, parameters).map { row in
                let shown = SQLIdentifier.shown(schema: try row.decode(String.self, at: 1), name: try row.decode(String.self, at: 2))
                return (try row.decode(String.self, at: 0), shown, try row.decode(String?.self, at: 3).flatMap(Gap.init(rawValue:)))
            }
    }

    /// SQL true when the publication named `$n` leaves out an operation (see ``Gap/operations``).
    static func operationsGap(publication parameter: String) -> String {
        "EXISTS (SELECT FROM pg_publication p WHERE p.pubname = \(parameter) AND NOT (p.pubinsert AND p.pubupdate AND p.pubdelete AND p.pubtruncate))"
    }

    /// What to do about `tables`, whose changes `source` does not announce (all of them: each
    /// with why not): one line.
    static func remedy(_ tables: [Checked], source: ChangeSource) -> String {
        func names(_ gap: Gap) -> String {
            Set(tables.filter { $0.gap == gap }.map(\.shown)).sorted().joined(separator: ", ")
        }
        var parts: [String] = []
        if tables.contains(where: { $0.gap == .dropped }) {
            let again = switch source {
            case .notifications: "enabled (LiveSchema.enable)"
            case .logicalReplication: "published (LiveSchema.publish)"
            }
            parts.append("\(names(.dropped)), which is gone (dropped or renamed): its live values follow again once a table of that name is created and \(again)")
        }
        switch source {
        case .notifications:
            if tables.contains(where: { $0.gap == .missing }) {
                parts.append("\(names(.missing)), whose changes are not announced: enable with LiveSchema.enable")
            }
            return parts.joined(separator: "; and ")
        case .logicalReplication(let publication, _):
            let publication = TerminalText.name(publication, limit: 100)
            if tables.contains(where: { $0.gap == .missing }) {
                parts.append("\(names(.missing)), not in the publication \(publication) this repository follows: add with LiveSchema.publish")
            }
            if tables.contains(where: { $0.gap == .partitions }) {
                parts.append("\(names(.partitions)), which the publication \(publication) publishes as its partitions: LiveSchema.publish sets its publish_via_partition_root, "
                             + "as ALTER PUBLICATION \(publication) SET (publish_via_partition_root = true) does")
            }
            if tables.contains(where: { $0.gap == .rowFilter }) {
                parts.append("\(names(.rowFilter)), which the publication \(publication) filters by a WHERE: changes of rows outside it would never arrive; publish it whole")
            }
            if tables.contains(where: { $0.gap == .operations }) {
                parts.append("\(names(.operations)), whose publication \(publication) leaves out some of inserts, updates, deletes and truncates: those changes would never arrive; "
                             + "ALTER PUBLICATION \(publication) SET (publish = 'insert, update, delete, truncate')")
            }
            return parts.joined(separator: "; and ")
        }
    }
}

extension LiveRepository {
    /// Throws unless this repository learns the changes of `table` (see ``FollowedTables``).
    func refuseUnfollowed<R: Record>(_ table: RecordTable<R>) async throws {
        let silent = try await FollowedTables.check([table.quoted], source: feed.source, on: database).filter { $0.gap != nil }
        guard silent.isEmpty else {
            throw PostgresError(.invalidStatement, "live values of \(R.self) read " + FollowedTables.remedy(silent, source: feed.source))
        }
    }
}
