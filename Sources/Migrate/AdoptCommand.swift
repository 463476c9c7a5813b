import ArgumentParser
import Repository

struct Adopt: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Take over a database that dbmate, golang-migrate, sqlx or Flyway migrated; applies nothing.",
        discussion: """
            Records every version the other tool applied, with the checksum of today's file, and \
            keeps that tool's table under a new name (<name>_adopted). Refuses while the other \
            tool's history is dirty, when an applied version has no file, and when a file sqlx or \
            Flyway applied was edited since (by the checksum it recorded).
            """)

    @OptionGroup var database: DatabaseOption
    @OptionGroup var migrations: MigrationsOptions
    @OptionGroup var lock: LockOption
    @Flag(help: "Adopt files sqlx or Flyway applied that were edited since, when the database holds what they say now.")
    var acceptEditedFiles = false

    func run() async throws {
        var migrator = try migrations.migrator()
        lock.apply(to: &migrator)
        let adoption = try await migrator.adopt(database.database(), acceptingEditedFiles: acceptEditedFiles)
        StandardOutput.line("Adopted \(adoption.versions.count) migration(s) from \(adoption.tool).")
    }
}
