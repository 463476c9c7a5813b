import ArgumentParser
import Foundation
import Repository

@main
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Versioned SQL migrations for PostgreSQL.",
        discussion: """
            Migrations are files named NNNN_name.sql or YYYYMMDDHHMMSS_name.sql (.sql in any case) \
            with a `-- migrate:up` section and an optional `-- migrate:down` section (empty: a \
            rollback that does nothing); golang-migrate's and sqlx's NNNN_name.up.sql and \
            .down.sql, sqlx's simple NNNN_name.sql of plain SQL (no file with a marker: up only), \
            and Flyway's V2__name.sql, V2.1__name.sql and U2__name.sql, are read as \
            they are (one layout per directory). Each migration \
            and its history row commit together; an advisory lock keeps concurrent runs apart. \
            Files that would break that — a NUL byte, COMMIT or ROLLBACK in a section that runs in a \
            transaction — are refused before anything runs.

            `adopt` takes over a database that dbmate, golang-migrate, sqlx or Flyway migrated.

            The database is --database-url, else DATABASE_URL, else libpq's environment when \
            PGHOST, PGDATABASE or PGSERVICE is set, else the demo's local database \
            (DEMO_DATA_DIRECTORY, started if it is not running). `status --json` gives versions \
            as strings.
            """,
        version: "0.4.0",
        subcommands: [Up.self, Down.self, Status.self, Validate.self, New.self, Baseline.self, Repair.self, Adopt.self,
                      Create.self, Wait.self, Live.self])

    /// Runs the command; any failure is one line on standard error, `migrate: …`, and a
    /// non-zero exit (3 for `status --fail-if-pending` with pending migrations).
    static func main() async {
        do {
            try ArgumentEncoding.refuseInvalidUTF8()
            var command = try parseAsRoot(try LeadingOptions.movedAfterCommand(Array(CommandLine.arguments.dropFirst()),
                                                                                commands: Set(configuration.subcommands.map { $0._commandName } + ["help"])))
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
            exitIfOutputLost()
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                StandardOutput.line(fullMessage(for: error))  // --help, --version
            } else if code.rawValue != 3 {
                StandardOutput.line("migrate: \(TerminalText.escaped(redactor.redact(oneLine(error)), limit: 2_000))", to: STDERR_FILENO)
            }
            exitIfOutputLost()
            Foundation.exit(code.rawValue)
        }
    }

    /// Standard output could not be written (a full disk): what the command did is not all
    /// shown, so it fails — `migrate status --json > out.json` must not leave a cut file behind
    /// a success (a stranger's run).
    private static func exitIfOutputLost() {
        guard let reason = StandardOutput.lostOutput else { return }
        StandardOutput.line("migrate: could not write standard output (\(reason)); what the command did is not all shown", to: STDERR_FILENO)
        Foundation.exit(74)  // EX_IOERR
    }

    /// Removes the passwords of the arguments and the environment from everything printed.
    static let redactor = SecretRedactor(scanning: CommandLine.arguments, environment: ProcessInfo.processInfo.environment)

    private static func oneLine(_ error: any Error) -> String {
        let message = switch error {
        case let error as MigrationError: error.message
        case let error as PostgresError: error.description
        case let error as LocalServerError: "\(error)"
        case let error as MigrateFailure: error.message
        case let error as ArgumentEncoding.Invalid: error.description
        default: self.message(for: error)
        }
        return message.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: "; ")
    }
}

/// A request that cannot be carried out, in one sentence.
struct MigrateFailure: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// Where the database is: `--database-url`, else `DATABASE_URL`, else libpq's own `PGHOST`,
/// `PGDATABASE` or `PGSERVICE` (as `psql` would connect), else the demo's local server.
struct DatabaseOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("A postgres:// URL or conninfo string (default: DATABASE_URL, else libpq's PGHOST/PGDATABASE/PGSERVICE, else the demo's local database).", valueName: "url"))
    var databaseURL: String?

    func configuration() async throws -> ConnectionConfiguration {
        if let databaseURL {
            return try ConnectionConfiguration(urlOrConninfo: databaseURL)
        }
        let environment = ProcessInfo.processInfo.environment
        if !(environment["DATABASE_URL"] ?? "").isEmpty { return try .environment() }  // empty: unset, as libpq has it
        // A server libpq's variables name is the one meant: migrating the demo's instead would
        // apply (or roll back) migrations on the wrong database.
        if let variable = Self.libpqVariables.first(where: { !(environment[$0] ?? "").isEmpty }) {
            StandardOutput.line("No --database-url or DATABASE_URL: using libpq's environment (\(variable) is set)", to: STDERR_FILENO)
            return try .environment()
        }
        let directory = LocalServer.directory(named: "demo", overriddenBy: "DEMO_DATA_DIRECTORY")
        StandardOutput.line("No --database-url or DATABASE_URL: using the demo's local database in \(directory)", to: STDERR_FILENO)
        return try await LocalServer.start(.persistent(directory: directory)).configuration
    }

    /// libpq's variables that name a server or a database; any one set means the user chose one.
    static let libpqVariables = ["PGHOST", "PGHOSTADDR", "PGDATABASE", "PGSERVICE", "PGPORT"]

    func database() async throws -> Database {
        Database(try await configuration(), maximumConnections: 2)
    }
}

/// The migrations and their history: `--dir` and `--history-table`.
struct MigrationsOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The migrations directory.", valueName: "directory"))
    var dir = "Migrations"

    @Option(name: .long, help: ArgumentHelp("The table recording applied migrations, optionally schema-qualified.", valueName: "table"))
    var historyTable = "schema_migrations"

    func migrator(progress: Bool = true) throws -> Migrator {
        var migrator = try Migrator(directory: dir)
        migrator.historyTable = historyTable
        if progress {
            // File names and SQL are the user's, but a terminal must not act on them.
            migrator.progress = { StandardOutput.line($0.split(separator: "\n", omittingEmptySubsequences: false).map { TerminalText.escaped(String($0), limit: 2000) }.joined(separator: "\n")) }
        }
        return migrator
    }
}

/// `--lock-timeout`, for the commands that take the migration lock.
struct LockOption: ParsableArguments {
    // Unconditional: `-1` is this option's value (refused below), not an unknown flag.
    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Seconds to wait for another run's lock.", valueName: "seconds"))
    var lockTimeout = 60

    func validate() throws {
        guard lockTimeout >= 0 else { throw ValidationError("--lock-timeout is the seconds to wait for another run's lock, 0 or more, not \(lockTimeout)") }
    }

    func apply(to migrator: inout Migrator) {
        migrator.lockTimeout = .seconds(lockTimeout)
    }
}
