import ArgumentParser
import Foundation
import Repository

struct Create: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Create the database the URL names, if it does not exist.")

    @OptionGroup var database: DatabaseOption

    func run() async throws {
        let configuration = try await database.configuration()
        guard let name = configuration.databaseName, !name.isEmpty else {
            throw MigrateFailure("the connection string names no database to create")
        }
        // Connected to the server's maintenance database, which exists from initdb on.
        let maintenance = Database(configuration.database("postgres"), maximumConnections: 1)
        defer { maintenance.close() }
        if try await !maintenance.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]).isEmpty {
            return StandardOutput.line("Database \(TerminalText.escaped(name)) already exists.")
        }
        do {
            try await maintenance.withConnection { try await $0.execute(script: "CREATE DATABASE \(SQLIdentifier.quoted(name))") }
        } catch let error as PostgresError where Self.createdMeanwhile(error) {
            // Another process (a replica starting beside this one) created it since the check.
            return StandardOutput.line("Database \(TerminalText.escaped(name)) already exists.")
        }
        StandardOutput.line("Created database \(TerminalText.escaped(name)).")
    }

    /// Whether `CREATE DATABASE` failed because the database exists: 42P04 when it was there
    /// before the statement, 23505 on the catalog's unique index when another one created it
    /// at the same moment.
    static func createdMeanwhile(_ error: PostgresError) -> Bool {
        error.sqlState == "42P04" || (error.sqlState == "23505" && error.message.contains("pg_database_datname_index"))
    }
}

struct Wait: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Wait until the server accepts connections (for start-up scripts).")

    @OptionGroup var database: DatabaseOption
    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("The longest to wait.", valueName: "seconds")) var timeout = 60

    func validate() throws {
        guard timeout >= 0 else { throw ValidationError("--timeout is the seconds to wait, 0 or more, not \(timeout)") }
    }

    func run() async throws {
        let configuration = try await database.configuration()
        let deadline = ContinuousClock.now + .seconds(timeout)
        var lastError: (any Error)?
        repeat {
            // Every attempt has a second at least: `--timeout 0` checks once.
            guard let outcome = await Self.attempt(configuration, until: max(deadline, .now + .seconds(1))) else { break }
            do {
                try outcome.get()
                return StandardOutput.line("The server accepts connections.")
            } catch {
                // A server that says the database does not exist is up (`migrate create` makes it);
                // one that refuses the role is not ready for this user: waited on, then reported.
                if "\(error)".contains(#/database ".*" does not exist/#) { return StandardOutput.line("The server accepts connections.") }
                lastError = error
            }
            try await Task.sleep(for: .milliseconds(250))
        } while ContinuousClock.now < deadline
        throw MigrateFailure("the server did not accept connections within \(timeout) s: \(lastError.map { "\($0)" } ?? "no answer")")
    }

    /// One connection and `SELECT 1`, given up at `deadline` (nil then): a server that takes
    /// the connection and never answers would hold the attempt for libpq's `connect_timeout`.
    private static func attempt(_ configuration: ConnectionConfiguration, until deadline: ContinuousClock.Instant) async -> Result<Void, any Error>? {
        let (outcomes, continuation) = AsyncStream<Result<Void, any Error>?>.makeStream()
        let probe = Task {
            let database = Database(configuration, maximumConnections: 1)
            defer { database.close() }
            do {
                try await database.query("SELECT 1")
                continuation.yield(.success(()))
            } catch {
                continuation.yield(.failure(error))
            }
        }
        let timer = Task {
            try? await Task.sleep(until: deadline)
            continuation.yield(nil)
        }
        defer { probe.cancel(); timer.cancel() }
        for await outcome in outcomes { return outcome }
        return nil
    }
}
