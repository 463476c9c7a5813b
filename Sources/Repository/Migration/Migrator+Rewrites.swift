extension Migrator {
    /// Accepts migrations an application rewrote on purpose — its old SQL moved elsewhere, say
    /// into a library — where the database applied exactly the old text: for each version whose
    /// recorded checksum is the one given, records the file's current checksum. Any other
    /// difference is still drift. Returns the versions accepted.
    ///
    /// ```swift
    /// try await migrator.acceptRewrites(database, [1: "aeb1ef13…"])   // 0001 once held the live schema
    /// ```
    @discardableResult
    public func acceptRewrites(_ database: Database, _ previousChecksums: [MigrationVersion: String]) async throws -> [MigrationVersion] {
        try await locked(database) { history in
            var accepted: [MigrationVersion] = []
            for record in try await history.records() where previousChecksums[record.version] == record.checksum {
                guard let migration = migrations.first(where: { $0.version == record.version }), migration.checksum != record.checksum else { continue }
                try await history.updateChecksum(of: record.version, to: migration.checksum)
                report("accepted the rewritten \(Self.shown(migration.source)): checksum \(record.checksum) -> \(migration.checksum)")
                accepted.append(record.version)
            }
            return accepted
        }
    }
}
