import Foundation

/// What ``Migrator/adopt(_:acceptingEditedFiles:)`` did.
public struct MigrationAdoption: Sendable, Hashable {
    /// The tool whose history was taken over.
    public let tool: MigrationTool
    /// Its history table, as found.
    public let table: String
    /// The name that table has now: kept, renamed, never dropped.
    public let renamedTo: String
    /// The versions recorded as applied, in order.
    public let versions: [MigrationVersion]
}

extension Migrator {
    /// Takes over a database that dbmate, golang-migrate, sqlx or Flyway migrated: records
    /// every version that tool applied in ``historyTable``, with the checksum of today's file,
    /// applies nothing, and renames the tool's table to `<name>_adopted` — in one transaction,
    /// under the migration lock.
    ///
    /// golang-migrate records only the version a database is at: every migration up to it
    /// counts as applied, and so does every one up to a Flyway baseline.
    ///
    /// sqlx and Flyway record a checksum of each file they applied: a file whose checksum,
    /// computed as that tool computes it, is not the one recorded was edited since, and what it
    /// says now may never have run — adopting it would record it as applied. Such files are
    /// refused, unless `acceptingEditedFiles` (the database holds what they say now). dbmate
    /// and golang-migrate record no checksum.
    /// - Throws: ``MigrationError`` when no such table is in sight or several are, when the
    ///   tool left it dirty (naming the version), when an applied version has no file, when a
    ///   file changed since the tool applied it (naming it), or when ``historyTable`` already
    ///   records migrations.
    @discardableResult
    public func adopt(_ database: Database, acceptingEditedFiles: Bool = false) async throws -> MigrationAdoption {
        try await locked(database) { history in
            let tables = try await history.tables()
            if let own = tables.own {
                switch own.shape {
                case .own:
                    guard try await history.records().isEmpty else {
                        throw MigrationError(.invalidRequest, "\(historyTable) already records this tool's migrations; there is nothing to adopt")
                    }
                case .unknown(let columns): throw HistoryTables.unknown(own.name, columns)
                case .foreign: break
                }
            }
            let found = ([tables.own].compactMap { $0 } + tables.foreign).compactMap { table -> (String, MigrationTool)? in
                if case .foreign(let tool) = table.shape { (table.name, tool) } else { nil }
            }
            guard let (table, tool) = found.first else {
                throw MigrationError(.invalidRequest, "no history table of dbmate, golang-migrate, sqlx or Flyway in sight (looked for \(HistoryTables.candidates(own: historyTable).joined(separator: ", "))); nothing to adopt")
            }
            guard found.count == 1 else {
                let list = found.map { "\($0.1)'s \($0.0)" }.joined(separator: " and ")
                throw MigrationError(.invalidRequest, "found \(list); rename all but the one to adopt, then adopt")
            }
            let renamed = (SQLIdentifier.parts(of: table).last?.text ?? table) + "_adopted"
            let schema = SQLIdentifier.parts(of: table).dropLast().map(SQLIdentifier.quoted(part:))
            let renamedQualified = (schema + [SQLIdentifier.quoted(renamed)]).joined(separator: ".")
            let adopted = try await history.connection.transaction { connection in
                // The tool's table locked before it is read: a run of that tool that wrote its
                // row meanwhile has committed, and its row is read (read first, it was lost).
                try await lockForeignTable(table, tool, on: connection)
                let foreign = try await ForeignHistory(tool, table: table, on: connection)
                let adopted = try adoptedMigrations(foreign)
                if !acceptingEditedFiles { try await refuseEditedFiles(adopted.map(\.0), foreign, on: connection) }
                if try await connection.query("SELECT to_regclass($1) IS NOT NULL", [renamedQualified])[0].decode(Bool.self, at: 0) {
                    throw MigrationError(.invalidRequest, "\(renamed) already exists, so \(tool)'s \(table) cannot be kept under that name; rename or drop \(renamed) first")
                }
                try await connection.execute(script: "ALTER TABLE \(SQLIdentifier.quoted(qualified: table)) RENAME TO \(SQLIdentifier.quoted(renamed))")
                try await history.create(dotted: migrations.contains { $0.version.integer == nil }, on: connection)
                for (migration, appliedAt) in adopted {
                    try await history.insert(migration, milliseconds: 0, appliedBy: "adopted from \(tool)", appliedAt: appliedAt, on: connection)
                }
                return adopted
            }
            report("found \(tool)'s history table \(table): \(adopted.count) migration(s) applied")
            report("recorded \(adopted.count) migration(s) in \(historyTable) with today's checksums; applied nothing")
            report("kept \(tool)'s table as \(renamed)")
            let pending = migrations.count - adopted.count
            let newest = adopted.map(\.0.version).max()
            let adoptedVersions = Set(adopted.map(\.0.version))
            let older = newest.map { newest in migrations.filter { $0.version < newest && !adoptedVersions.contains($0.version) }.count } ?? 0
            if older > 0 {
                report("\(pending) migration(s) pending, \(older) of them older than the newest applied (\(newest.map { "\($0)" } ?? "")): `migrate up --allow-out-of-order` applies them")
            } else if pending > 0 {
                report("\(pending) migration(s) pending; `migrate up` applies them")
            }
            return MigrationAdoption(tool: tool, table: table, renamedTo: renamed, versions: adopted.map(\.0.version))
        }
    }

    /// Locks `table` against every other session for the rest of the transaction, waiting up to
    /// the lock timeout for a run of its tool that is writing it.
    private func lockForeignTable(_ table: String, _ tool: MigrationTool, on connection: Connection) async throws {
        // In milliseconds, at most what the setting holds (about 24 days); 0 would wait for ever.
        let milliseconds = Int64(min(Double(Int32.max), max(1, (lockTimeout / .milliseconds(1)).rounded(.up))))
        try await connection.execute(script: "SET LOCAL lock_timeout = \(milliseconds)")
        do {
            try await connection.execute(script: "LOCK TABLE \(SQLIdentifier.quoted(qualified: table)) IN ACCESS EXCLUSIVE MODE")
        } catch let error as PostgresError where error.sqlState == "55P03" {
            throw MigrationError(.lockTimeout, "\(tool)'s \(table) has been in use by another session (a run of \(tool)?) for more than \(lockTimeout); try again once it has finished")
        }
        try await connection.execute(script: "SET LOCAL lock_timeout = DEFAULT")
    }

    /// Throws when a file of `adopted` is not what `foreign`'s tool applied, by the checksum it
    /// recorded. A migration whose file cannot be read again (one built in code) is not checked.
    private func refuseEditedFiles(_ adopted: [Migration], _ foreign: ForeignHistory, on connection: Connection) async throws {
        var edited: [Migration] = []
        for migration in adopted {
            guard let recorded = foreign.checksums[migration.version],
                  let contents = FileManager.default.contents(atPath: migration.source) else { continue }
            if try await !recorded.matches(contents, on: connection) { edited.append(migration) }
        }
        guard !edited.isEmpty else { return }
        let files = edited.prefix(5).map { URL(fileURLWithPath: $0.source).lastPathComponent }.joined(separator: ", ")
        throw MigrationError(.drift, "\(foreign.tool) applied \(edited.count == 1 ? "this file" : "these files") other than \(edited.count == 1 ? "it is" : "they are") now "
                             + "(the checksum it recorded differs): \(files)\(edited.count > 5 ? "…" : ""); what \(edited.count == 1 ? "it says" : "they say") now may never have run. "
                             + "Restore the file as applied, then adopt — or, when the database holds what the file says now, adopt accepting edited files (--accept-edited-files)")
    }

    /// The migrations `foreign` says are applied, each with when, if known.
    /// - Throws: ``MigrationError`` listing applied versions that have no file.
    private func adoptedMigrations(_ foreign: ForeignHistory) throws -> [(Migration, String?)] {
        let known = Set(migrations.map(\.version))
        var missing = foreign.applied.keys.filter { !known.contains($0) }
        if let through = foreign.through, foreign.tool == .golangMigrate, !known.contains(through) { missing.append(through) }
        guard missing.isEmpty else {
            let versions = missing.sorted().prefix(10).map(\.description).joined(separator: ", ")
            throw MigrationError(.drift, "\(foreign.tool) applied version(s) \(versions)\(missing.count > 10 ? "…" : "") but no migration file has them; restore the files, then adopt")
        }
        return migrations.compactMap { migration in
            if let appliedAt = foreign.applied[migration.version] { return (migration, appliedAt) }
            if let through = foreign.through, migration.version <= through { return (migration, nil) }
            return nil
        }
    }
}
