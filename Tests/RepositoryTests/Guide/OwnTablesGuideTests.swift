import Foundation
import Repository
import Testing

/// README's "Your own tables": its program is `Examples/OwnTables` word for word, and that
/// package — outside this repository's targets — runs against a real PostgreSQL.
@Suite("Guide: your own tables")
struct OwnTablesGuideTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let source = root.appendingPathComponent("Examples/OwnTables/Sources/OwnTables/main.swift").path
    static let binary = root.appendingPathComponent("Examples/OwnTables/.build/debug/OwnTables").path
    static var isBuilt: Bool { FileManager.default.isExecutableFile(atPath: binary) }

    /// The Swift block of README's "Your own tables" section.
    static func readmeProgram() throws -> String {
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "\n## Your own tables\n").dropFirst().first)
        let block = try #require(section.components(separatedBy: "\n```swift\n").dropFirst().first)
        return try #require(block.components(separatedBy: "\n```\n").first) + "\n"
    }

    @Test("README's program is the example package's main.swift, word for word")
    func readmeIsTheExample() throws {
        #expect(try Self.readmeProgram() == String(contentsOfFile: Self.source, encoding: .utf8))
    }

    @Test("the example package runs against a fresh database: the composite key, the write, the live query and join follow",
          .enabled(if: isBuilt, "Examples/OwnTables is not built here: .ci/run builds it (swift build --package-path Examples/OwnTables)"))
    func runsAsWritten() async throws {
        let database = try await TestServer.makeDatabase()
        let url = try await TestServer.connectionString(database: database.name())
        let program = try ChildProcess(Self.binary, [], environment: ["DATABASE_URL": url])
        let completion = await program.completion()
        let output = completion.text
        #expect(completion.status == 0, "\(output)")
        #expect(output.contains(#"["ada", "grace"] admin [2]"#), "\(output)")
        #expect(try await database.query("SELECT role FROM team_members WHERE project_id = 1 AND user_id = 'ada'")[0].decode(String.self, at: 0) == "admin")
        #expect(try await LiveSchema.installedVersion(on: database) == LiveSchema.version)
    }
}
