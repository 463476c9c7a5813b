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
        try await maintenance.withConnection { try await $0.execute(script: "CREATE DATABASE \(SQLIdentifier.quoted(name))") }
        StandardOutput.line("Created database \(TerminalText.escaped(name)).")
    }
}

struct Wait: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Wait until the server accepts connections (for start-up scripts).")

    @OptionGroup var database: DatabaseOption
    @Option(name: .long, help: ArgumentHelp("The longest to wait.", valueName: "seconds")) var timeout = 60

    func run() async throws {
        let configuration = try await database.configuration()
        let deadline = ContinuousClock.now + .seconds(timeout)
        var lastError: (any Error)?
        repeat {
            let probe = Database(configuration, maximumConnections: 1)
            defer { probe.close() }
            do {
                try await probe.query("SELECT 1")
                return StandardOutput.line("The server accepts connections.")
            } catch {
                // A server that says the database does not exist is up.
                if "\(error)".contains("does not exist") { return StandardOutput.line("The server accepts connections.") }
                lastError = error
            }
            try await Task.sleep(for: .milliseconds(250))
        } while ContinuousClock.now < deadline
        throw MigrateFailure("the server did not accept connections within \(timeout) s: \(lastError.map { "\($0)" } ?? "no answer")")
    }
}
