import ArgumentParser
import Foundation
import Repository

/// `migrate live install` and `migrate live enable TABLE`: the library's `live` schema from the
/// command line, for deployment scripts (the same calls as `LiveSchema` in Swift).
struct Live: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Install the library's live schema, or enable a table's change announcements.",
        subcommands: [Install.self, Enable.self])

    struct Install: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Install or upgrade the live schema (idempotent; safe when several processes run it at once).")

        @OptionGroup var database: DatabaseOption

        func run() async throws {
            let pool = try await database.database()
            defer { pool.close() }
            let installed = try await LiveSchema.install(on: pool)
            let version = try await LiveSchema.installedVersion(on: pool) ?? LiveSchema.version
            if installed {
                StandardOutput.line("Installed live schema version \(LiveSchema.version).")
            } else if version < LiveSchema.version {
                StandardOutput.line("warning: the live schema is at version \(version), which this role may not upgrade to \(LiveSchema.version) "
                                    + "(it is not the schema's owner): it keeps working; run `migrate live install` as its owner", to: STDERR_FILENO)
            } else {
                StandardOutput.line("The live schema is up to date (version \(version)).")
            }
            let left = try await LiveSchema.unpinnedFunctions(on: pool)
            if !left.isEmpty {
                StandardOutput.line("warning: \(left.count) function(s) of the live schema made by another role still run with their caller's search_path "
                                    + "(\(TerminalText.escaped(left.joined(separator: ", "), limit: 300))): run `migrate live install` as their owner or a superuser",
                                    to: STDERR_FILENO)
            }
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Announce every change of a table (installing the live schema first if needed).")

        @OptionGroup var database: DatabaseOption
        @Argument(help: "The table, as SQL spells it: members, crm.members, \"Odd Name\".") var table: String

        func run() async throws {
            let pool = try await database.database()
            defer { pool.close() }
            try await LiveSchema.enable(table, on: pool)
            StandardOutput.line("Changes of \(TerminalText.escaped(table, limit: 200)) are announced.")
        }
    }
}
