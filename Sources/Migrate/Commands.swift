import ArgumentParser
import Foundation
import Repository

struct Up: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply pending migrations, in version order.")

    @OptionGroup var options: DatabaseOptions
    @Option(name: .long, help: "Apply up to and including this version.") var to: Int64?
    @Flag(name: .long, help: "Print what would run; change nothing.") var dryRun = false

    func run() async throws {
        try await reportingErrors {
            let database = try await options.database()
            let applied = try await options.migrator().migrate(database, to: to, dryRun: dryRun)
            print(applied.isEmpty ? "Nothing to apply." : "\(dryRun ? "Would apply" : "Applied") \(applied.count) migration(s).")
        }
    }
}

struct Down: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Roll back the most recently applied migrations (refuses when a down section is missing).")

    @OptionGroup var options: DatabaseOptions
    @Option(name: .long, help: "How many migrations to roll back.") var steps = 1
    @Flag(name: .long, help: "Print what would run; change nothing.") var dryRun = false

    func run() async throws {
        try await reportingErrors {
            let database = try await options.database()
            let undone = try await options.migrator().rollback(database, steps: steps, dryRun: dryRun)
            print(undone.isEmpty ? "Nothing to roll back." : "\(dryRun ? "Would roll back" : "Rolled back") \(undone.count) migration(s).")
        }
    }
}

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show each migration's state: applied, pending, changed or missing.")

    @OptionGroup var options: DatabaseOptions
    @Flag(name: .long, help: "Print JSON.") var json = false
    @Flag(name: .long, help: "Exit with status 3 when any migration is pending.") var failIfPending = false

    func run() async throws {
        var pending = false
        try await reportingErrors {
            let statuses = try await options.migrator(progress: false).status(options.database())
            pending = statuses.contains { $0.state == .pending }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                encoder.dateEncodingStrategy = .iso8601
                print(String(decoding: try encoder.encode(statuses), as: UTF8.self))
            } else {
                print(StatusTable(statuses).text)
            }
        }
        if failIfPending && pending { throw ExitCode(3) }
    }
}

struct Validate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Fail on checksum drift, missing files, or out-of-order pending migrations.")

    @OptionGroup var options: DatabaseOptions

    func run() async throws {
        try await reportingErrors {
            try await options.migrator(progress: false).validate(options.database())
            print("Migrations are valid.")
        }
    }
}

struct New: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Create the next migration file with empty up and down sections.")

    @Option(name: .long, help: "The migrations directory.") var dir = "Migrations"
    @Argument(help: "What the migration does, e.g. add_email.") var name: String

    func run() async throws {
        try await reportingErrors { print(try Migrator.createFile(named: name, in: dir)) }
    }
}

struct Baseline: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Mark an existing database as migrated up to a version, without running anything.")

    @OptionGroup var options: DatabaseOptions
    @Argument(help: "The last version the database already has.") var version: Int64

    func run() async throws {
        try await reportingErrors {
            try await options.migrator().baseline(options.database(), through: version)
        }
    }
}

/// `migrate status` as an aligned table.
struct StatusTable {
    let text: String

    init(_ statuses: [MigrationStatus]) {
        let formatter = ISO8601DateFormatter()
        let rows = [["VERSION", "NAME", "STATE", "APPLIED AT"]] + statuses.map {
            [String($0.version), $0.name, $0.state.rawValue, $0.appliedAt.map(formatter.string(from:)) ?? ""]
        }
        let widths = (0..<4).map { column in rows.map { $0[column].count }.max() ?? 0 }
        text = rows.map { row in
            zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces)
        }.joined(separator: "\n") + (statuses.isEmpty ? "\n(no migrations)" : "")
    }
}
