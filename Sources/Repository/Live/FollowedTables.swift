/// Which tables a repository learns the changes of: those with the announcement triggers
/// (``LiveSchema/enable(_:on:)``) when it listens to notifications, those in its publication
/// (``LiveSchema/publish(_:on:publication:)``) when it follows logical replication. A live
/// value over any other table would never follow other processes, so it is refused.
enum FollowedTables {
    /// Each of `relations` (names the server parses as `regclass`; a partition stands for its
    /// partitioned root) as announcements name it, and whether `source` announces its changes.
    static func check(_ relations: [String], source: ChangeSource, on database: Database) async throws -> [(name: String, followed: Bool)] {
        let followed: String
        var parameters = [SQLValue.text(ArrayLiteral.string(from: relations.map(SQLValue.text)))]
        switch source {
        case .notifications:
            followed = "EXISTS (SELECT FROM pg_trigger t WHERE t.tgrelid = c.oid AND t.tgname = 'live_announce_update')"
        case .logicalReplication(let publication, _):
            followed = "EXISTS (SELECT FROM pg_publication_tables p WHERE p.pubname = $2 AND p.schemaname = n.nspname AND p.tablename = c.relname)"
            parameters.append(.text(publication))
        }
        return try await database.query("""
            SELECT n.nspname || '.' || c.relname, \(followed)
            FROM unnest($1::text[]) AS r(name)
            JOIN pg_class c ON c.oid = coalesce(pg_partition_root(r.name::regclass), r.name::regclass)
            JOIN pg_namespace n ON n.oid = c.relnamespace
            """, parameters).map { (try $0.decode(String.self, at: 0), try $0.decode(Bool.self, at: 1)) }
    }

    /// What to do about `tables`, whose changes `source` does not announce: one line.
    static func remedy(_ tables: [String], source: ChangeSource) -> String {
        let names = Set(tables).sorted().map { TerminalText.name($0) }.joined(separator: ", ")
        switch source {
        case .notifications:
            return "\(names), whose changes are not announced: enable with LiveSchema.enable"
        case .logicalReplication(let publication, _):
            return "\(names), not in the publication \(TerminalText.name(publication, limit: 100)) this repository follows: add with LiveSchema.publish"
        }
    }
}

extension LiveRepository {
    /// Throws unless this repository learns the changes of `table` (see ``FollowedTables``).
    func refuseUnfollowed<R: Record>(_ table: RecordTable<R>) async throws {
        let silent = try await FollowedTables.check([table.quoted], source: feed.source, on: database).filter { !$0.followed }
        guard silent.isEmpty else {
            throw PostgresError(.invalidStatement, "live values of \(R.self) read " + FollowedTables.remedy(silent.map(\.name), source: feed.source))
        }
    }
}
