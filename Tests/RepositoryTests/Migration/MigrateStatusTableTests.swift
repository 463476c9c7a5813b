import Foundation
import Repository
import Testing

/// `migrate status` lines its columns up as a terminal shows characters, whatever the names hold.
@Suite("migrate status: the table")
struct MigrateStatusTableTests {
    @Test("names with an emoji, combining accents and CJK characters keep the columns aligned, by the columns a terminal gives them")
    func alignedByCharacters() async throws {
        let cli = try await MigrateCommandTests()
        let directory = try MigrationDirectory([
            "0001_party_🎉🎉.sql": "-- migrate:up\nSELECT 1;\n",
            "0002_cafe\u{301}_cre\u{300}me.sql": "-- migrate:up\nSELECT 1;\n",
            "0003_plain_name.sql": "-- migrate:up\nSELECT 1;\n",
            "0004_漢字の名前.sql": "-- migrate:up\nSELECT 1;\n",
        ])
        defer { directory.remove() }
        let run = try await cli.migrate("status", "--dir", directory.path, "--database-url", cli.databaseURL)
        let lines = run.output.split(separator: "\n").filter { $0.hasPrefix("VERSION") || $0.first?.isNumber == true }
        #expect(lines.count == 5, "\(run.output)")
        // Where STATE starts, counted in terminal columns, is the same on every line.
        let starts = lines.map { line in TerminalText.width(of: String(line[..<line.range(of: line.hasPrefix("VERSION") ? "STATE" : "pending")!.lowerBound])) }
        #expect(Set(starts).count == 1, "\(starts): \(run.output)")
    }
}
