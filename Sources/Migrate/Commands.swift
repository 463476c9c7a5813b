import ArgumentParser
import Foundation
import Repository

struct Up: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply pending migrations, in version order.")

    @OptionGroup var database: DatabaseOption
    @OptionGroup var migrations: MigrationsOptions
    @OptionGroup var lock: LockOption
    @Option(name: .long, help: ArgumentHelp("Apply up to and including this version.", valueName: "version")) var to: MigrationVersion?
    @Flag(name: .long, help: "Allow pending migrations older than the newest applied one.") var allowOutOfOrder = false
    @Flag(name: .long, help: "Print what would run; change nothing.") var dryRun = false

    func run() async throws {
        var migrator = try migrations.migrator()
        lock.apply(to: &migrator)
        migrator.allowOutOfOrder = allowOutOfOrder
        let applied = try await migrator.migrate(database.database(), to: to, dryRun: dryRun)
        StandardOutput.line(applied.isEmpty ? "Nothing to apply." : "\(dryRun ? "Would apply" : "Applied") \(applied.count) migration(s).")
    }
}

struct Down: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Roll back applied migrations, newest first (refuses when a down section is missing).")

    @OptionGroup var database: DatabaseOption
    @OptionGroup var migrations: MigrationsOptions
    @OptionGroup var lock: LockOption
    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("How many migrations to roll back (default 1).", valueName: "count")) var steps: Int?
    @Option(name: .long, help: ArgumentHelp("Roll back every migration above this version.", valueName: "version")) var to: MigrationVersion?
    @Flag(name: .long, help: "Print what would run; change nothing.") var dryRun = false

    func validate() throws {
        if steps != nil, to != nil { throw ValidationError("give --steps or --to, not both") }
        if let steps, steps < 1 { throw ValidationError("--steps counts the migrations to roll back, 1 or more, not \(steps)") }
    }

    func run() async throws {
        var migrator = try migrations.migrator()
        lock.apply(to: &migrator)
        let target = try await database.database()
        let undone = if let to {
            try await migrator.rollback(target, to: to, dryRun: dryRun)
        } else {
            try await migrator.rollback(target, steps: steps ?? 1, dryRun: dryRun)
        }
        StandardOutput.line(undone.isEmpty ? "Nothing to roll back." : "\(dryRun ? "Would roll back" : "Rolled back") \(undone.count) migration(s).")
    }
}

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show each migration's state — applied, pending, changed or missing — and the files skipped.")

    @OptionGroup var database: DatabaseOption
    @OptionGroup var migrations: MigrationsOptions
    @Flag(name: .long, help: "Print JSON (skipped files go to standard error).") var json = false
    @Flag(name: .long, help: "Exit with status 3 when any migration is pending.") var failIfPending = false

    func run() async throws {
        let migrator = try migrations.migrator(progress: false)
        let statuses = try await migrator.status(database.database())
        let skipped = migrator.skipped.map { "skipped \(TerminalText.escaped($0.file, limit: 200)): \($0.reason)" }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            encoder.dateEncodingStrategy = .custom { date, encoder in
                var container = encoder.singleValueContainer()
                try container.encode(StatusTable.shown(date))
            }
            StandardOutput.line(String(decoding: try encoder.encode(statuses), as: UTF8.self))
            for line in skipped { StandardOutput.line(line, to: STDERR_FILENO) }
        } else {
            StandardOutput.line(StatusTable(statuses).text)
            for line in skipped { StandardOutput.line(line) }
        }
        if failIfPending && statuses.contains(where: { $0.state == .pending }) { throw ExitCode(3) }
    }
}

struct Validate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Fail on checksum drift, missing files, or out-of-order pending migrations.")

    @OptionGroup var database: DatabaseOption
    @OptionGroup var migrations: MigrationsOptions
    @Flag(name: .long, help: "Allow pending migrations older than the newest applied one.") var allowOutOfOrder = false

    func run() async throws {
        var migrator = try migrations.migrator(progress: false)
        migrator.allowOutOfOrder = allowOutOfOrder
        try await migrator.validate(database.database())
        StandardOutput.line("Migrations are valid.")
    }
}

struct New: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Create the next migration file with empty up and down sections.")

    @Option(name: .long, help: ArgumentHelp("The migrations directory.", valueName: "directory")) var dir = "Migrations"
    @Argument(help: ArgumentHelp("What the migration does, e.g. add_email.", valueName: "name")) var name: String

    /// Prints each file created: the up file, and its down file where the layout has two.
    func run() async throws {
        let up = try Migrator.createFile(named: name, in: dir)
        StandardOutput.line(TerminalText.escaped(up, limit: 2000))
        if up.hasSuffix(".up.sql"), case let down = String(up.dropLast(".up.sql".count)) + ".down.sql", FileManager.default.fileExists(atPath: down) {
            StandardOutput.line(TerminalText.escaped(down, limit: 2000))
        }
    }
}

struct Baseline: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Mark an existing database as migrated up to a version, without running anything.")

    @OptionGroup var database: DatabaseOption
    @OptionGroup var migrations: MigrationsOptions
    @OptionGroup var lock: LockOption
    @Argument(help: ArgumentHelp("The last version the database already has.", valueName: "version")) var version: MigrationVersion

    func run() async throws {
        var migrator = try migrations.migrator()
        lock.apply(to: &migrator)
        try await migrator.baseline(database.database(), through: version)
    }
}

struct Repair: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Accept a deliberately edited applied migration: record its file's new checksum.")

    @OptionGroup var database: DatabaseOption
    @OptionGroup var migrations: MigrationsOptions
    @OptionGroup var lock: LockOption
    @Option(name: .customLong("version"), help: ArgumentHelp("The applied migration whose file was edited.", valueName: "version"))
    var target: MigrationVersion

    func run() async throws {
        var migrator = try migrations.migrator(progress: false)
        lock.apply(to: &migrator)
        let (old, new) = try await migrator.repair(database.database(), version: target)
        StandardOutput.line(old == new ? "Version \(target) already matches its file (\(new))." : "Version \(target): checksum \(old) -> \(new)")
    }
}

/// `migrate status` as an aligned table.
struct StatusTable {
    let text: String

    /// When a migration was applied, in ISO 8601 — or `infinity`, `-infinity` as a history
    /// edited by hand may hold (read as `Date.distantFuture`, `.distantPast`).
    static func shown(_ date: Date) -> String {
        if date == .distantFuture { return "infinity" }
        if date == .distantPast { return "-infinity" }
        return ISO8601DateFormatter().string(from: date)
    }

    init(_ statuses: [MigrationStatus]) {
        let rows = [["VERSION", "NAME", "STATE", "APPLIED AT"]] + statuses.map {
            ["\($0.version)", TerminalText.escaped($0.name, limit: 80), $0.state.rawValue, $0.appliedAt.map(Self.shown) ?? ""]
        }
        let widths = (0..<4).map { column in rows.map { TerminalText.width(of: $0[column]) }.max() ?? 0 }
        text = rows.map { row in
            // Padded by the columns a terminal gives each character (two for `漢` or `🎉`, one
            // for `é` with a combining accent), not by UTF-16 units or characters.
            zip(row, widths).map { TerminalText.padded($0, toWidth: $1) }.joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces)
        }.joined(separator: "\n") + (statuses.isEmpty ? "\n(no migrations)" : "")
    }
}
