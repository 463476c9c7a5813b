import Foundation
import Repository
import Testing

/// `-- migrate:down` followed by nothing is a rollback that deliberately does nothing (an enum
/// value added, an extension kept); a file with no down marker still cannot be rolled back.
@Suite("Empty down sections")
struct EmptyDownTests {
    let database: Database
    let cli: MigrateCommandTests

    init() async throws {
        cli = try await MigrateCommandTests()
        database = cli.database
    }

    @Test("an empty down section rolls back as a no-op, said in the output; only a comment is empty too")
    func emptyDown() async throws {
        let directory = try MigrationDirectory([
            "0001_mood.sql": "-- migrate:up\nCREATE TYPE mood AS ENUM ('sad');\n-- migrate:down\nDROP TYPE mood;\n",
            "0002_happy.sql": "-- migrate:up\nALTER TYPE mood ADD VALUE IF NOT EXISTS 'happy';\n\n-- migrate:down\n\n",
            "0003_extension.sql": "-- migrate:up\nCREATE EXTENSION IF NOT EXISTS pgcrypto;\n-- migrate:down\n-- kept on purpose: other schemas use it\n",
        ])
        defer { directory.remove() }
        let migrator = try directory.migrator()
        #expect(migrator.migrations.map(\.down) == ["DROP TYPE mood;", "", "-- kept on purpose: other schemas use it"])
        try await migrator.migrate(database)
        let down = try await cli.migrate("down", "--steps", "2", "--dir", directory.path, "--database-url", cli.databaseURL)
        #expect(down.status == 0, "\(down.output)")
        #expect(down.output.contains("rolled back \(directory.path)/0003_extension.sql: its down section is empty, so no SQL ran (a deliberate no-op)"), "\(down.output)")
        #expect(down.output.contains("rolled back \(directory.path)/0002_happy.sql: its down section is empty"), "\(down.output)")
        #expect(try await database.count("SELECT count(*) FROM schema_migrations") == 1)
        #expect(try await database.count("SELECT count(*) FROM pg_extension WHERE extname = 'pgcrypto'") == 1)
        #expect(try await database.count("SELECT count(*) FROM pg_enum WHERE enumlabel = 'happy'") == 1)
        let dryRun = try await cli.migrate("down", "--dry-run", "--dir", directory.path, "--database-url", cli.databaseURL)
        #expect(dryRun.output.contains("would roll back \(directory.path)/0001_mood.sql:\nDROP TYPE mood;"), "\(dryRun.output)")
        #expect(try await migrator.migrate(database).map(\.version) == [2, 3])  // pending again: their up sections re-run
    }

    @Test("no down marker at all is still refused, and nothing is rolled back")
    func noMarker() async throws {
        let directory = try MigrationDirectory([
            "0001_a.sql": "-- migrate:up\nCREATE TABLE a (id int);\n-- migrate:down\n",
            "0002_b.sql": "-- migrate:up\nCREATE TABLE b (id int);\n",
        ])
        defer { directory.remove() }
        try await directory.migrator().migrate(database)
        let run = try await cli.migrate("down", "--steps", "2", "--dir", directory.path, "--database-url", cli.databaseURL)
        #expect(run.status != 0 && run.output.contains("0002_b.sql has no -- migrate:down section; nothing was rolled back"), "\(run.output)")
        #expect(try await database.count("SELECT count(*) FROM schema_migrations") == 2)
    }
}
