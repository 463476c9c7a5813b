import Foundation
import Repository
import Testing

/// The `migrate` executable, run as a separate process against a real database.
@Suite("migrate command")
struct MigrateCommandTests {
    struct Run {
        var status: Int32
        var output: String
    }

    let databaseURL: String
    let database: Database

    init() async throws {
        database = try await TestServer.makeDatabase()
        databaseURL = try await TestServer.connectionString(database: database.name())
    }

    func migrate(_ arguments: String...) throws -> Run {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("migrate")
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }

    @Test("new, up, status, down and validate from the command line")
    func lifecycle() async throws {
        let directory = try MigrationDirectory()
        defer { directory.remove() }
        let created = try migrate("new", "create_notes", "--dir", directory.path)
        #expect(created.status == 0)
        let path = created.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(path.hasSuffix("0001_create_notes.sql"))
        try "-- migrate:up\nCREATE TABLE notes (id int);\n-- migrate:down\nDROP TABLE notes;\n".write(toFile: path, atomically: true, encoding: .utf8)

        let pending = try migrate("status", "--fail-if-pending", "--dir", directory.path, "--database-url", databaseURL)
        #expect(pending.status == 3)
        #expect(pending.output.contains("pending"))

        let up = try migrate("up", "--dir", directory.path, "--database-url", databaseURL)
        #expect(up.status == 0, "\(up.output)")
        #expect(up.output.contains("applied \(path) in "))
        #expect(try await database.tableExists("notes"))

        let status = try migrate("status", "--json", "--dir", directory.path, "--database-url", databaseURL)
        struct Entry: Decodable { var version: Int; var state: String }
        let entries = try JSONDecoder().decode([Entry].self, from: Data(status.output.utf8))
        #expect(entries.map(\.state) == ["applied"])

        #expect(try migrate("validate", "--dir", directory.path, "--database-url", databaseURL).status == 0)
        #expect(try migrate("down", "--dir", directory.path, "--database-url", databaseURL).status == 0)
        #expect(try await !database.tableExists("notes"))
    }

    @Test("a failing migration exits non-zero with file, line, message and SQLSTATE")
    func failure() throws {
        let directory = try MigrationDirectory(["0001_bad.sql": "-- migrate:up\nCREATE TABLE ok (id int);\nCREATE TABLE bad (id int,);\n"])
        defer { directory.remove() }
        let run = try migrate("up", "--dir", directory.path, "--database-url", databaseURL)
        #expect(run.status != 0)
        #expect(run.output.contains("0001_bad.sql:3: syntax error"))
        #expect(run.output.contains("SQLSTATE 42601"))
    }

    @Test("--help documents every command")
    func help() throws {
        let help = try migrate("--help").output
        for command in ["up", "down", "status", "validate", "new", "baseline"] {
            #expect(help.contains("  \(command) "), "missing \(command)")
        }
    }
}
