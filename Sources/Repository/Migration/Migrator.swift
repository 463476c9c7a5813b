public import Foundation

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

    /// A migrator over the `*.sql` files (any case) of `directory`; other files are listed in
    /// ``skipped``.
    /// - Throws: ``MigrationError`` naming the file for a misnamed, unreadable, non-UTF-8 or
    ///   malformed migration, a directory named like one, or a duplicate version.
    public init(directory: String) throws {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        } catch {
            throw MigrationError(.invalidRequest, "cannot read the migrations directory \(directory): \(FileProblem.reason(error))")
        }
        var skipped: [(String, String)] = []
        var migrations: [Migration] = []
        for name in names {
            guard Migration.isSQLFile(name) else {
                skipped.append((name, "not a .sql file"))
                continue
            }
            let path = (directory as NSString).appendingPathComponent(name)
            migrations.append(try Migration(fileName: name, path: path, contents: try FileProblem.readText(path)))
        }
        try self.init(migrations)
        self.skipped = skipped
    }

    /// Creates the next migration file in `directory` with empty up and down sections and
    /// returns its path. Versions continue the directory's style: sequence numbers
    /// (`0008_…`), or UTC timestamps (`20240229134506_…`) when the files use them.
    public static func createFile(named name: String, in directory: String, now: Date = Date()) throws -> String {
        let slug = name.lowercased().map { $0.isLetter || $0.isNumber ? String($0) : "_" }.joined()
        guard slug.contains(where: { $0 != "_" }) else { throw MigrationError(.invalidRequest, "a migration needs a name with letters or digits") }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let existing = try FileManager.default.contentsOfDirectory(atPath: directory).compactMap { file in
            Migration.versionAndName(file).map { (file.prefix { $0.isNumber }.count, $0.0) }
        }
        let version: String
        if existing.contains(where: { $0.0 >= 14 }) {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: now)
            version = String(format: "%04d%02d%02d%02d%02d%02d", parts.year!, parts.month!, parts.day!, parts.hour!, parts.minute!, parts.second!)
        } else {
            let next = (existing.map(\.1).max() ?? 0) + 1
            let width = max(4, existing.map(\.0).max() ?? 4)
            version = String(repeating: "0", count: max(0, width - String(next).count)) + String(next)
        }
        let path = (directory as NSString).appendingPathComponent("\(version)_\(slug).sql")
        guard !FileManager.default.fileExists(atPath: path) else { throw MigrationError(.invalidRequest, "\(path) already exists") }
        try "-- migrate:up\n\n\n-- migrate:down\n\n".write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func report(_ line: String) { progress?(line) }

    /// Runs `body` on one connection holding the migration lock.
    func locked<T>(_ database: Database, _ body: (MigrationHistory) async throws -> T) async throws -> T {
        try await database.withConnection { connection in
            let history = MigrationHistory(table: historyTable, connection: connection)
            try await history.lock(timeout: lockTimeout)
            do {
                let result = try await body(history)
                try await history.unlock()
                return result
            } catch {
                // If the connection broke, the server released the lock with the session.
                try? await history.unlock()
                throw error
            }
        }
    }
}
