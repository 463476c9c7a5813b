import ArgumentParser
import Foundation
import Repository

@main
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Versioned SQL migrations for PostgreSQL.",
        discussion: """
            Migrations are files named NNNN_name.sql or YYYYMMDDHHMMSS_name.sql with a \
            `-- migrate:up` section and an optional `-- migrate:down` section. Each migration and \
            its history row commit together; an advisory lock keeps concurrent runs apart.

            The database is --database-url, else DATABASE_URL, else the demo's local database \
            (started if it is not running).
            """,
        subcommands: [Up.self, Down.self, Status.self, Validate.self, New.self, Baseline.self])
}

/// Options every command that talks to the database shares.
struct DatabaseOptions: ParsableArguments {
    @Option(name: .long, help: "The migrations directory.")
    var dir = "Migrations"

    @Option(name: .long, help: "A postgres:// URL or conninfo string (default: DATABASE_URL, else the demo's local database).")
    var databaseURL: String?

    @Option(name: .long, help: "Seconds to wait for another run's lock.")
    var lockTimeout = 60

    @Flag(name: .long, help: "Allow pending migrations older than the newest applied one.")
    var allowOutOfOrder = false

    func migrator(progress: Bool = true) throws -> Migrator {
        var migrator = try Migrator(directory: dir)
        migrator.lockTimeout = .seconds(lockTimeout)
        migrator.allowOutOfOrder = allowOutOfOrder
        if progress { migrator.progress = { print($0) } }
        return migrator
    }

    func database() async throws -> Database {
        if let databaseURL {
            return Database(databaseURL.contains("://") ? try ConnectionConfiguration(url: databaseURL) : try ConnectionConfiguration(conninfo: databaseURL), maximumConnections: 2)
        }
        if ProcessInfo.processInfo.environment["DATABASE_URL"] != nil {
            return Database(try .environment(), maximumConnections: 2)
        }
        let directory = LocalServer.directory(named: "demo", overriddenBy: "DEMO_DATA_DIRECTORY")
        FileHandle.standardError.write(Data("No --database-url or DATABASE_URL: using the demo's local database in \(directory)\n".utf8))
        let server = try await LocalServer.start(.persistent(directory: directory))
        return Database(server.configuration, maximumConnections: 2)
    }
}

/// Runs a command body, turning library errors into one-line messages and a failing exit.
func reportingErrors(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as MigrationError {
        throw ValidationFailure(error.message)
    } catch let error as PostgresError {
        throw ValidationFailure(error.description)
    } catch let error as LocalServerError {
        throw ValidationFailure(error.message)
    }
}

struct ValidationFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
