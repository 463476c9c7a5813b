extension Migrator {
    /// Applies pending migrations in version order, up to and including `target` when given.
    /// With `dryRun`, reports what would run and changes nothing.
    /// - Returns: the migrations applied (or, with `dryRun`, that would be).
    /// - Throws: ``MigrationError``: drift, out-of-order pending migrations, a lock timeout,
    ///   or a failed migration — named by file and line, with the server's message and SQLSTATE.
    @discardableResult
    public func migrate(_ database: Database, to target: MigrationVersion? = nil, dryRun: Bool = false) async throws -> [Migration] {
        try await locked(database) { history in
            let records = try await history.records()
            try checkApplied(records)
            if let target { try refuseUnknown(target, records) }
            let appliedVersions = Set(records.map(\.version))
            let pending = migrations.filter { migration in !appliedVersions.contains(migration.version) && target.map { migration.version <= $0 } ?? true }
            if let newest = records.map(\.version).max(), !allowOutOfOrder {
                let late = pending.filter { $0.version < newest }
                if !late.isEmpty {
                    throw MigrationError(.outOfOrder, "pending migrations are older than the newest applied one (\(newest)): \(late.map(\.source).joined(separator: ", ")); apply them with --allow-out-of-order if that is intended")
                }
            }
            for migration in pending { try migration.checkStatements(down: false) }
            if dryRun {
                for migration in pending { report("would apply \(Self.shown(migration.source)):\n\(migration.up)") }
                return pending
            }
            if !pending.isEmpty {
                try await Self.refuseBackslashEscapes(on: history.connection)
                try await history.requireRoom(for: pending.map(\.version))
            }
            // Made with the first migration, in its transaction when it has one: a first run
            // that fails leaves no empty history table behind.
            var makesHistory = !pending.isEmpty
            let dotted = migrations.contains { $0.version.integer == nil }
            for migration in pending {
                let clock = ContinuousClock()
                let start = clock.now
                if migration.upRunsInTransaction {
                    try await history.connection.transaction { connection in
                        if makesHistory { try await history.create(dotted: dotted, on: connection) }
                        try await run(migration.up, of: migration, down: false, on: connection)
                        try await recording(migration, applied: false, on: connection) {
                            try await history.insert(migration, milliseconds: milliseconds(since: start, clock), on: connection)
                        }
                    }
                } else {
                    if makesHistory { try await history.create(dotted: dotted) }
                    try await runStatementByStatement(migration.up, of: migration, down: false, on: history.connection)
                    try await recording(migration, applied: true, on: history.connection) {
                        try await history.insert(migration, milliseconds: milliseconds(since: start, clock), on: history.connection)
                    }
                }
                makesHistory = false
                report("applied \(Self.shown(migration.source)) in \(milliseconds(since: start, clock)) ms")
            }
            return pending
        }
    }

    /// Undoes the `steps` most recently applied migrations (highest versions first), each in
    /// one transaction with the removal of its history row. Refuses before changing anything
    /// when one of them has no down section or no file.
    @discardableResult
    public func rollback(_ database: Database, steps: Int = 1, dryRun: Bool = false) async throws -> [Migration] {
        try await rollback(database, dryRun: dryRun) { $0.suffix(max(0, steps)) }
    }

    /// Undoes every applied migration with a version above `target`, highest first, like
    /// ``rollback(_:steps:dryRun:)``.
    @discardableResult
    public func rollback(_ database: Database, to target: MigrationVersion, dryRun: Bool = false) async throws -> [Migration] {
        try await rollback(database, dryRun: dryRun) { records in
            try refuseUnknown(target, records)
            return records.filter { $0.version > target }[...]
        }
    }

    /// A target that is no migration's version, applied or on file, is refused: a typo
    /// (`--to 99` for `--to 20240199`) would otherwise roll back every newer migration, or
    /// apply nothing and say so. Version 0 is the state before any migration.
    func refuseUnknown(_ target: MigrationVersion, _ records: [MigrationHistory.Record]) throws {
        guard target != 0, !migrations.contains(where: { $0.version == target }), !records.contains(where: { $0.version == target }) else { return }
        throw MigrationError(.invalidRequest, "no migration has version \(target), applied or on file; --to names one (0: before the first), so nothing was done")
    }

    private func rollback(_ database: Database, dryRun: Bool,
                          choosing choose: @escaping ([MigrationHistory.Record]) throws -> ArraySlice<MigrationHistory.Record>) async throws -> [Migration] {
        try await locked(database) { history in
            let records = try await history.records()
            let byVersion = Dictionary(uniqueKeysWithValues: migrations.map { ($0.version, $0) })
            let targets = try choose(records).reversed().map { record in
                guard let migration = byVersion[record.version] else {
                    throw MigrationError(.drift, "applied migration version \(record.version) (\(record.name)) has no file, so it cannot be rolled back")
                }
                // The down section of a file edited since it was applied may not undo what ran.
                guard migration.checksum == record.checksum else {
                    throw MigrationError(.drift, "\(migration.source) changed after it was applied (checksum drift), so its down section may not undo what ran; "
                                         + "restore it, or accept the edit with `migrate repair --version \(record.version)`; nothing was rolled back")
                }
                guard migration.down != nil else {
                    let missing = migration.sectionsAreWholeFiles ? "no down file" : "no -- migrate:down section"
                    throw MigrationError(.irreversible, "\(migration.source) has \(missing); nothing was rolled back")
                }
                try migration.checkStatements(down: true)
                return migration
            }
            if !dryRun, !targets.isEmpty { try await Self.refuseBackslashEscapes(on: history.connection) }
            for migration in targets {
                guard let down = migration.down else { continue }
                let noOp = SQLStatements.split(down).isEmpty
                if dryRun {
                    report(noOp ? "would roll back \(Self.shown(migration.downSource)): its down section is empty, so no SQL would run" : "would roll back \(Self.shown(migration.downSource)):\n\(down)")
                    continue
                }
                if migration.downRunsInTransaction {
                    try await history.connection.transaction { connection in
                        try await run(down, of: migration, down: true, on: connection)
                        try await recording(migration, applied: false, down: true, on: connection) { try await history.delete(migration.version, on: connection) }
                    }
                } else {
                    try await runStatementByStatement(down, of: migration, down: true, on: history.connection)
                    try await recording(migration, applied: true, down: true, on: history.connection) {
                        try await history.delete(migration.version, on: history.connection)
                    }
                }
                report(noOp ? "rolled back \(Self.shown(migration.downSource)): its down section is empty, so no SQL ran (a deliberate no-op)" : "rolled back \(Self.shown(migration.downSource))")
            }
            return targets
        }
    }

    /// Ends what the section set for its session, then writes (or, rolling back, removes) the
    /// history row of `migration`, whose section ran: a failure (the section dropped or locked
    /// the history table, or constrained it) names the file and says what stays. `applied`:
    /// the section ran outside a transaction, so its statements stay whatever happens to the row.
    private func recording(_ migration: Migration, applied: Bool, down: Bool = false, on connection: Connection,
                           _ write: () async throws -> Void) async throws {
        var step = "ending what it set for its session (RESET) failed"
        do {
            // What the section set for its session (`SET ROLE`, a search_path emptied as pg_dump
            // does, read-only) ends with it: the history row is written as the run's own role,
            // and the next migration starts as it would alone.
            try await connection.execute(script: "RESET SESSION AUTHORIZATION; RESET ROLE; RESET ALL")
            step = "the history table could not be \(down ? "updated" : "written")"
            try await write()
        } catch let error as PostgresError {
            let file = down ? migration.downSource : migration.source
            let outcome = switch (applied, down) {
            case (false, false): "nothing of it stays applied"
            case (false, true): "nothing was rolled back"
            case (true, false): "its statements ran outside a transaction and stay applied, with no history row: undo them, or fix the cause and write the row yourself, before `migrate up` runs it again"
            case (true, true): "its statements ran outside a transaction and stay applied, while the history still lists it as applied"
            }
            throw MigrationError(.failed, "\(file): its statements ran, but \(step): \(Self.serverWords(error)); \(outcome)", underlying: error)
        }
    }

    /// Runs a section statement by statement (in the transaction its caller opened), so that
    /// a failure is pointed at the failing statement's line in the file.
    private func run(_ sql: String, of migration: Migration, down: Bool, on connection: Connection) async throws {
        for statement in Migration.statements(sql) {
            do {
                try await connection.execute(statement: statement.sql)
            } catch let error as PostgresError {
                throw failure(error, migration, statement, down: down)
            }
        }
    }

    /// Runs each statement on its own, outside a transaction (`transaction:false`).
    private func runStatementByStatement(_ sql: String, of migration: Migration, down: Bool, on connection: Connection) async throws {
        for (index, statement) in SQLStatements.split(sql).enumerated() {
            do {
                try await connection.execute(statement: statement.sql)
            } catch let error as PostgresError {
                // Said only when some did run: a re-run failing on its first statement ran none.
                throw failure(error, migration, statement, down: down,
                              note: index == 0 ? " (no statement of it ran; no history row was written)"
                                  : " (earlier statements of this transaction:false section stay applied; no history row was written)")
            }
        }
        // A BEGIN without its COMMIT: the history row would join that transaction, and both
        // would be rolled back when the connection closes, after `up` said it applied them.
        if await connection.isInTransaction {
            await connection.rollback()
            throw MigrationError(.failed, "\(down ? migration.downSource : migration.source): the section left a transaction open (a BEGIN without its COMMIT); "
                                 + "what ran in it was rolled back and no history row was written (statements before that BEGIN stay applied)")
        }
    }

    /// `file:line: message (SQLSTATE …) in: <the statement's first line>`, the line being where
    /// the server's error position falls, or else where the statement starts (past the
    /// comments before it).
    private func failure(_ error: PostgresError, _ migration: Migration, _ statement: SQLStatements.Statement,
                         down: Bool, note: String = "") -> MigrationError {
        let own = SQLStatements.afterLeadingComments(statement.sql)
        let offset = error.position.map { Self.lineOffset(of: $0, in: statement.sql) } ?? own.lines
        let line = (down ? migration.downLine : migration.upLine) + statement.line + offset
        let firstLine = SQLPasswords.redacted(own.text.split(whereSeparator: \.isNewline).first.map(String.init) ?? String(own.text))
        let shown = firstLine.count > 120 ? firstLine.prefix(117) + "..." : Substring(firstLine)
        // The library's own schema, not installed yet: say how to install it.
        let hint = if error.sqlState == "3F000" && error.message.contains(#"schema "live""#) {
            " (the library's live schema is not installed: run `migrate live install` first, or LiveSchema.install(on:))"
        } else if error.sqlState == "42601" && error.message.hasPrefix("cannot insert multiple commands") {
            // Each statement is sent alone (``Connection/execute(statement:)``): the server read
            // this one as several, so the file and the server disagree on where strings end.
            " (migrate sends one statement at a time, and the server read this one as several: was standard_conforming_strings turned off?)"
        } else {
            ""
        }
        return MigrationError(.failed, "\(down ? migration.downSource : migration.source):\(line): \(Self.serverWords(error))\(hint)\(note) in: \(shown)", underlying: error)
    }

    /// The server's message with its detail, SQLSTATE and hint, as `demo` and ``PostgresError``
    /// show them — a RAISE's or a constraint's own words: `m1 — m2 (SQLSTATE P0001) Hint: m3`.
    static func serverWords(_ error: PostgresError) -> String {
        error.message + (error.detail.map { " — \($0)" } ?? "") + (error.sqlState.map { " (SQLSTATE \($0))" } ?? "")
            + (error.hint.map { " Hint: \($0)" } ?? "")
    }

    /// How many lines into `sql` the 1-based character `position` is.
    static func lineOffset(of position: Int?, in sql: String) -> Int {
        guard let position, position > 0 else { return 0 }
        // `\n`, `\r\n` (counted at its `\n`) and a `\r` alone each end a line.
        let scalars = Array(sql.unicodeScalars.prefix(position))
        return scalars.indices.dropLast().count { at in
            scalars[at] == "\n" || (scalars[at] == "\r" && (at + 1 == scalars.count || scalars[at + 1] != "\n"))
        }
    }

    private func milliseconds(since start: ContinuousClock.Instant, _ clock: ContinuousClock) -> Int64 {
        let elapsed = clock.now - start
        return elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
    }

    /// Stops a run when an applied migration's file changed or vanished.
    func checkApplied(_ records: [MigrationHistory.Record]) throws {
        let byVersion = Dictionary(uniqueKeysWithValues: migrations.map { ($0.version, $0) })
        for record in records {
            guard let migration = byVersion[record.version] else {
                throw MigrationError(.drift, "applied migration version \(record.version) (\(record.name)) has no file any more; restore it")
            }
            if migration.checksum != record.checksum {
                throw MigrationError(.drift, "\(migration.source) changed after it was applied (checksum drift); restore it and add a new migration instead")
            }
        }
    }
}
