import Foundation
@testable import Repository
import Testing

/// A 1 MB migration file: read, split and checked in time that grows with its length (it used
/// to grow with its square: 8,000 statements took 14 s), applied, and failures placed right.
@Suite("A 1 MB migration")
struct LargeMigrationTests {
    /// `chunks` times four statements of the kinds migrations hold.
    static func sql(chunks: Int) -> String {
        var text = ""
        for index in 0..<chunks {
            text += """
                INSERT INTO big (id, note) VALUES (\(index), 'row \(index); it''s fine');
                -- a comment; with a semicolon
                CREATE FUNCTION f_\(index)() RETURNS int LANGUAGE plpgsql AS $body$ BEGIN RETURN \(index); END $body$;
                /* a block; comment */ UPDATE big SET note = E'\\'quoted\\';' WHERE id = \(index);
                SELECT f_\(index)();

                """
        }
        return text
    }

    @Test("1 MB is read, split and checked in well under a second, applied whole, and a failure after 12,000 lines is placed on its line")
    func megabyte() async throws {
        let body = Self.sql(chunks: 3_600)
        #expect(body.utf8.count > 1_000_000)
        let directory = try MigrationDirectory(["0001_big.sql": "-- migrate:up\nCREATE TABLE big (id int PRIMARY KEY, note text);\n" + body])
        defer { directory.remove() }
        let clock = ContinuousClock()
        let start = clock.now
        let migrator = try directory.migrator()
        let elapsed = clock.now - start
        // A debug build reads it in about 0.1 s; the quadratic splitter took minutes (the bound
        // leaves room for a loaded machine and the thread sanitizer).
        #expect(elapsed < .seconds(30), "reading 1 MB took \(elapsed)")
        #expect(SQLStatements.split(migrator.migrations[0].up).count == 1 + 4 * 3_600)

        let database = try await TestServer.makeDatabase()
        try await migrator.migrate(database)
        #expect(try await database.count("SELECT count(*) FROM big") == 3_600)
        #expect(try await database.count("SELECT count(*) FROM big WHERE note = '''quoted'';'") == 3_600)

        // 4,000 statements of three lines each (a string and a comment spanning them), then one that fails.
        try directory.write("0002_bad.sql", "-- migrate:up\n" + String(repeating: "SELECT 'a;\n-- b' -- c;\n;\n", count: 4_000) + "SELECT 1/0;\n")
        let error = await #expect(throws: MigrationError.self) { try await directory.migrator().migrate(database) }
        #expect(error?.message.contains("0002_bad.sql:\(1 + 3 * 4_000 + 1): division by zero") == true, "\(error?.message ?? "")")
    }
}
