import Foundation

/// Applies versioned SQL migrations to a database, safely.
///
/// - Each migration and its history row commit in one transaction: a failure leaves no trace
///   and no "dirty" flag to repair.
/// - A session advisory lock serializes runs, so two instances started together apply each
///   migration exactly once; the second waits up to ``lockTimeout``.
/// - Applied migrations whose files changed (checksum drift) or vanished stop the run, and so do
///   pending migrations older than the newest applied one, unless ``allowOutOfOrder``.
///
/// ```swift
/// let migrator = try Migrator(directory: "Migrations")
/// try await migrator.migrate(database)
/// ```
public struct Migrator: Sendable {
    /// The migrations, in ascending version order.
    public let migrations: [Migration]
    /// The history table, optionally schema-qualified (`schema_migrations` by default).
    public var historyTable = "schema_migrations"
    /// How long to wait for another run's lock before giving up.
    public var lockTimeout: Duration = .seconds(60)
    /// Whether pending migrations older than the newest applied one may be applied.
    public var allowOutOfOrder = false
    /// Receives a line per step, such as `applied 0002_people in 12 ms`.
    public var progress: (@Sendable (String) -> Void)?
    /// Files of the directory that are not migrations, with why: they were left alone.
    public private(set) var skipped: [(file: String, reason: String)] = []
    /// The layout of the directory the migrations were read from, if they were.
    public private(set) var layout: MigrationFileLayout?

    /// A migrator over migrations built in code.
    /// - Throws: ``MigrationError`` when two share a version, or a section that runs in a
    ///   transaction has a transaction-control statement (`COMMIT`, `ROLLBACK`…).
    public init(_ migrations: [Migration]) throws {
        let sorted = migrations.sorted { $0.version < $1.version }
        for (first, second) in zip(sorted, sorted.dropFirst()) where first.version == second.version {
            throw MigrationError(.duplicateVersion, "\(first.source) and \(second.source) share version \(first.version)")
        }
        for migration in sorted { try migration.checkTransactionControl() }
        self.migrations = sorted
    }

    /// A migrator over the `*.sql` files (any case) of `directory`, in any one of the layouts
    /// of ``MigrationFileLayout``; other files are listed in ``skipped``.
    /// - Throws: ``MigrationError`` naming the file for a misnamed, unreadable, non-UTF-8 or
    ///   malformed migration, a directory named like one, a duplicate version, a down file
    ///   without its up file, or a directory that mixes layouts.
    public init(directory: String) throws {
        let files = try MigrationFiles(directory: directory)
        try self.init(files.migrations)
        self.skipped = files.skipped
        self.layout = files.layout
    }

    func report(_ line: String) { progress?(line) }

    /// A file's name as a progress line shows it: control characters (a newline too) escaped,
    /// so that a file name cannot pass for a line of its own or act on a terminal.
    static func shown(_ name: String) -> String { TerminalText.escaped(name, limit: 500) }

    /// Refuses a session whose `standard_conforming_strings` is off (a database or role set so):
    /// statements are split reading `'…'` strings as PostgreSQL does by default, with
    /// backslashes as plain characters; with it off the server would end them elsewhere.
    static func refuseBackslashEscapes(on connection: Connection) async throws {
        let setting = try await connection.query("SELECT current_setting('standard_conforming_strings')")
        guard try setting.first?.decode(String.self, at: 0) == "off" else { return }
        throw MigrationError(.invalidRequest, "the server runs this session with standard_conforming_strings = off, so backslashes escape quotes in '…' strings "
                             + "and statements would end elsewhere than migrate splits them; turn it on for the database (ALTER DATABASE … SET standard_conforming_strings = on) "
                             + "or the connection (options=-c standard_conforming_strings=on in the URL); nothing was run")
    }

    /// Runs `body` on one connection holding the migration lock.
    func locked<T>(_ database: Database, _ body: (MigrationHistory) async throws -> T) async throws -> T {
        try await database.withConnection { connection in
            // Closed, not reused, once the run is over: migrations may have changed its session
            // (`SET search_path`, `SET ROLE`, temporary tables) for whoever took it next.
            defer { connection.isReusable.store(false, ordering: .relaxed) }
            let unresolved = try MigrationHistory(table: historyTable, connection: connection)
            let (lock, history) = try await unresolved.lock(timeout: lockTimeout)
            do {
                let result = try await body(history)
                try await unresolved.unlock(lock)
                return result
            } catch {
                // If the connection broke, the server released the lock with the session.
                try? await unresolved.unlock(lock)
                throw error
            }
        }
    }
}
