import ArgumentParser
import Repository

struct Adopt: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Take over a database that dbmate, golang-migrate, sqlx or Flyway migrated; applies nothing.",
        discussion: """
            Records every version the other tool applied, with the checksum of today's file, and \
            keeps that tool's table under a new name (<name>_adopted). Refuses while the other \
            tool's history is dirty, and when an applied version has no file.
            """)

    @OptionGroup var database: DatabaseOption
    @OptionGroup var migrations: MigrationsOptions
    @OptionGroup var lock: LockOption

    func run() async throws {
        var migrator = try migrations.migrator()
        lock.apply(to: &migrator)
        let adoption = try await migrator.adopt(database.database())
        StandardOutput.line("Adopted \(adoption.versions.count) migration(s) from \(adoption.tool).")
    }
}
