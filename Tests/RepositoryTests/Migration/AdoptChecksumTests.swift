import Foundation
@testable import Repository
import Testing

/// `adopt` checks the checksums sqlx and Flyway recorded: a file edited since the tool applied
/// it is refused, as the tool itself would refuse it, unless accepted.
@Suite("Adopting another tool's history: edited files")
struct AdoptChecksumTests {
    let database: Database
    let cli: MigrateCommandTests

    init() async throws {
        cli = try await MigrateCommandTests()
        database = cli.database
    }

    @Test("Flyway's checksum is zlib's CRC-32 of the file's lines without their line ends or a byte-order mark, signed")
    func flywayChecksum() {
        // Expected values from Python: zlib.crc32 of the bytes with CR, LF and the BOM removed, as a signed 32-bit integer.
        #expect(ForeignChecksum.flyway(Data()) == 0)
        #expect(ForeignChecksum.flyway(Data("CREATE TABLE teams (id int);\r\nSELECT 1;\n".utf8)) == -1_384_853_442)
        #expect(ForeignChecksum.flyway(Data([0xEF, 0xBB, 0xBF] + Array("SELECT 1;\rSELECT 2;".utf8))) == -1_665_099_012)
        #expect(ForeignChecksum.flyway(Data("SELECT 'café';\n".utf8)) == 987_117_724)
    }

    @Test("a file sqlx or Flyway applied, edited since: refused naming it, nothing changed; line ends changed by a checkout are no edit; accepted on request",
          arguments: [MigrationTool.sqlx, .flyway])
    func editedFile(tool: MigrationTool) async throws {
        let project = try await OtherToolProject.make(tool, database: database)
        defer { project.root.remove() }
        let files = try FileManager.default.contentsOfDirectory(atPath: project.migrations)
        func path(of version: MigrationVersion) -> String {
            let prefix = tool == .flyway ? "V\(version)__" : "\(version)_"
            return project.migrations + "/" + files.first { $0.hasPrefix(prefix) && !$0.hasSuffix(".down.sql") }!
        }
        // The first file checked out with CRLF line ends: the same file.
        let first = try String(contentsOfFile: path(of: project.applied[0]), encoding: .utf8)
        try first.replacingOccurrences(of: "\n", with: "\r\n").write(toFile: path(of: project.applied[0]), atomically: true, encoding: .utf8)
        // The second given a statement the database never ran.
        let second = path(of: project.applied[1])
        try (try String(contentsOfFile: second, encoding: .utf8) + "ALTER TABLE teams ADD COLUMN subtitle text;\n")
            .write(toFile: second, atomically: true, encoding: .utf8)

        let migrator = try Migrator(directory: project.migrations)
        let refused = await #expect(throws: MigrationError.self) { try await migrator.adopt(database) }
        #expect(refused?.kind == .drift)
        let name = URL(fileURLWithPath: second).lastPathComponent
        #expect(refused?.message.contains("\(tool) applied this file other than it is now (the checksum it recorded differs): \(name);") == true,
                "\(refused?.message ?? "")")
        #expect(try await database.tableExists(OtherToolProject.tableName(tool)))
        #expect(try await !database.tableExists("schema_migrations"))

        let run = try await cli.migrate("adopt", "--dir", project.migrations, "--database-url", cli.databaseURL)
        #expect(run.status != 0 && run.output.split(separator: "\n").count == 1 && run.output.contains(name), "\(run.output)")
        let accepted = try await cli.migrate("adopt", "--accept-edited-files", "--dir", project.migrations, "--database-url", cli.databaseURL)
        #expect(accepted.status == 0 && accepted.output.contains("Adopted 2 migration(s) from \(tool)."), "\(accepted.output)")
        #expect(try await migrator.status(database).map(\.state) == [.applied, .applied, .pending])
    }
}
