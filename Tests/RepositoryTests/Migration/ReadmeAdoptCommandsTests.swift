import Foundation
import Repository
import Testing

/// README's "Coming from dbmate, golang-migrate, sqlx or Flyway": its commands, as written, on a
/// project and database each of the four tools left behind.
@Suite("README: coming from another tool")
struct ReadmeAdoptCommandsTests {
    static let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("README.md").path

    /// The argument lists of the `swift run migrate …` lines of the section's first `sh` block.
    static func commands() throws -> [[String]] {
        let text = try String(contentsOfFile: readme, encoding: .utf8)
        guard let section = text.components(separatedBy: "\n## Coming from dbmate, golang-migrate, sqlx or Flyway\n").dropFirst().first,
              let block = section.components(separatedBy: "```sh\n").dropFirst().first?.components(separatedBy: "\n```").first else {
            throw TestSetupError("README.md has no sh block under \"Coming from dbmate, golang-migrate, sqlx or Flyway\"")
        }
        return block.split(separator: "\n").map { line in
            let command = line.components(separatedBy: " #").first ?? String(line)
            return command.split(separator: " ").map(String.init)
        }
    }

    @Test("the section's commands run as written for each tool", arguments: MigrationTool.allCases)
    func commandsRun(tool: MigrationTool) async throws {
        let commands = try Self.commands()
        #expect(commands.count == 3)
        #expect(commands.allSatisfy { $0.starts(with: ["swift", "run", "migrate"]) }, "\(commands)")
        let database = try await TestServer.makeDatabase()
        let project = try await OtherToolProject.make(tool, database: database)
        defer { project.root.remove() }
        let url = try await TestServer.connectionString(database: database.name())
        var outputs: [String] = []
        for command in commands {
            // `swift run migrate` runs the built executable, in the project's directory.
            let run = try await MigrateCommandTests.run(Array(command.dropFirst(3)), in: project.root.path,
                                                  environment: ProcessInfo.processInfo.environment.merging(["DATABASE_URL": url]) { $1 })
            #expect(run.status == 0, "\(command.joined(separator: " ")): \(run.output)")
            outputs.append(run.output)
        }
        #expect(outputs[0].contains("found \(tool)'s history table") && outputs[0].contains("applied nothing"), "\(outputs[0])")
        #expect(outputs[1].split(separator: "\n").filter { $0.contains("applied") }.count == 2, "\(outputs[1])")
        #expect(outputs[1].split(separator: "\n").filter { $0.contains("pending") }.count == 1, "\(outputs[1])")
        #expect(outputs[2].contains("Applied 1 migration(s)."), "\(outputs[2])")
        #expect(try await database.tableExists("players"))
    }
}
