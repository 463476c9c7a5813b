public import Foundation

/// Where one migration stands in a database.
public struct MigrationStatus: Sendable, Hashable, Codable {
    /// Applied, pending, changed since applied, or applied with its file gone.
    public enum State: String, Sendable, Codable {
        /// Applied, and its file is unchanged.
        case applied
        /// Not applied yet.
        case pending
        /// Applied, but its file changed since (checksum drift).
        case changed
        /// Applied, but its file is gone.
        case missing
    }

    /// The migration's version.
    public let version: MigrationVersion
    /// The migration's name.
    public let name: String
    /// Where it stands.
    public let state: State
    /// When it was applied, if it was.
    public let appliedAt: Date?
    /// How long applying it took, if it was applied.
    public let executionMilliseconds: Int64?
}

extension Migrator {
    /// Every migration known to the files or the history, in version order.
    public func status(_ database: Database) async throws -> [MigrationStatus] {
        let records = try await database.withConnection { connection in
            try await MigrationHistory(table: historyTable, connection: connection).records()
        }
        let recordsByVersion = Dictionary(uniqueKeysWithValues: records.map { ($0.version, $0) })
        var statuses = migrations.map { migration in
            guard let record = recordsByVersion[migration.version] else {
                return MigrationStatus(version: migration.version, name: migration.name, state: .pending, appliedAt: nil, executionMilliseconds: nil)
            }
            return MigrationStatus(version: migration.version, name: migration.name,
                                   state: record.checksum == migration.checksum ? .applied : .changed,
                                   appliedAt: record.appliedAt, executionMilliseconds: record.executionMs)
        }
        let known = Set(migrations.map(\.version))
        statuses += records.filter { !known.contains($0.version) }.map {
            MigrationStatus(version: $0.version, name: $0.name, state: .missing, appliedAt: $0.appliedAt, executionMilliseconds: $0.executionMs)
        }
        return statuses.sorted { $0.version < $1.version }
    }

    /// Checks that the files and the history agree.
    /// - Throws: ``MigrationError`` listing every changed or missing file, and pending
    ///   migrations older than the newest applied one (unless ``allowOutOfOrder``).
    public func validate(_ database: Database) async throws {
        let statuses = try await status(database)
        let sources = Dictionary(uniqueKeysWithValues: migrations.map { ($0.version, $0.source) })
        var problems: [String] = []
        for status in statuses {
            let file = sources[status.version] ?? "version \(status.version) (\(status.name))"
            switch status.state {
            case .changed: problems.append("\(file) changed after it was applied")
            case .missing: problems.append("\(file) was applied but its file is gone")
            case .pending:
                if !allowOutOfOrder, let newest = statuses.filter({ $0.state != .pending }).map(\.version).max(), status.version < newest {
                    problems.append("\(file) is pending but older than the newest applied migration (\(newest))")
                }
            case .applied: break
            }
        }
        guard problems.isEmpty else {
            throw MigrationError(.drift, "validation failed: " + problems.joined(separator: "; "))
        }
    }

    /// Marks an existing database as migrated through `version`: every known migration up to
    /// it is recorded as applied without running. Only for a database with no history yet.
    public func baseline(_ database: Database, through version: MigrationVersion) async throws {
        try await locked(database) { history in
            guard try await history.records().isEmpty else {
                throw MigrationError(.invalidRequest, "\(historyTable) already records migrations; baseline is only for a database that has none")
            }
            // A typo (`baseline 2024011` for `20240111`) would otherwise mark every older migration applied.
            guard migrations.contains(where: { $0.version == version }) else {
                throw MigrationError(.invalidRequest, "no migration has version \(version); baseline names the newest migration the database already has, so nothing was recorded")
            }
            let covered = migrations.filter { $0.version <= version }
            try await history.create(dotted: migrations.contains { $0.version.integer == nil })
            try await history.connection.transaction { connection in
                for migration in covered {
                    try await history.insert(migration, milliseconds: 0, appliedBy: "baseline", on: connection)
                }
            }
            report("baselined through \(version): \(covered.count) migration(s) marked as applied")
        }
    }

    /// Accepts a deliberately edited, already applied migration: records its file's current
    /// checksum. Returns the checksums before and after.
    /// - Throws: ``MigrationError`` when `version` is not applied or has no file.
    @discardableResult
    public func repair(_ database: Database, version: MigrationVersion) async throws -> (old: String, new: String) {
        try await locked(database) { history in
            guard let record = try await history.records().first(where: { $0.version == version }) else {
                throw MigrationError(.invalidRequest, "version \(version) is not applied; there is nothing to repair")
            }
            guard let migration = migrations.first(where: { $0.version == version }) else {
                throw MigrationError(.invalidRequest, "version \(version) (\(record.name)) has no file to take a checksum from")
            }
            try await history.updateChecksum(of: version, to: migration.checksum)
            report("repaired \(Self.shown(migration.source)): checksum \(record.checksum) -> \(migration.checksum)")
            return (record.checksum, migration.checksum)
        }
    }
}
