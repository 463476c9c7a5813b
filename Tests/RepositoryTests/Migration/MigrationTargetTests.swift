import Foundation
@testable import Repository
import Testing

/// What a stranger's run found in `--to` and in progress lines: a target no migration has
/// rolled everything newer back (a typo away from losing tables), and a newline in a file's
/// name printed raw let the name pass for a progress line of its own.
@Suite("Migration targets and progress lines")
struct MigrationTargetTests {
    let database: Database

    init() async throws {
        database = try await TestServer.makeDatabase()
    }

    static func table(_ name: String) -> String {
        "-- migrate:up\nCREATE TABLE \(name) (id int);\n-- migrate:down\nDROP TABLE \(name);\n"
    }

    @Test("a --to that names no migration, up or down, is refused in one line and changes nothing; 0 and real versions work")
    func unknownTarget() async throws {
        let directory = try MigrationDirectory([
            "20240101_a.sql": Self.table("a"), "20240102_b.sql": Self.table("b"), "20240103_c.sql": Self.table("c"),
        ])
        defer { directory.remove() }
        let migrator = try directory.migrator()
        let up = await #expect(throws: MigrationError.self) { try await migrator.migrate(database, to: 12345) }
        #expect(up?.kind == .invalidRequest && up?.message.contains("no migration has version 12345") == true, "\(String(describing: up))")
        #expect(try await !database.tableExists("a"))
        #expect(try await migrator.migrate(database, to: 20240102).map(\.version) == [20240101, 20240102])
        try await migrator.migrate(database)

        let down = await #expect(throws: MigrationError.self) { try await migrator.rollback(database, to: 99) }
        #expect(down?.kind == .invalidRequest && down?.message.contains("\n") == false, "\(String(describing: down))")
        for table in ["a", "b", "c"] { #expect(try await database.tableExists(table)) }
        #expect(try await migrator.rollback(database, to: 20240101).map(\.version) == [20240103, 20240102])
        #expect(try await migrator.rollback(database, to: 0).map(\.version) == [20240101])
        #expect(try await !database.tableExists("a"))
    }

    @Test("progress lines show a file name's newline and other control characters escaped")
    func fileNameInProgress() async throws {
        let name = "0001_x\napplied 0002_forged.sql in 1 ms\u{1B}[2J.sql"
        let directory = try MigrationDirectory([name: Self.table("forged")])
        defer { directory.remove() }
        var migrator = try directory.migrator()
        let lines = Locked<[String]>([])
        migrator.progress = { line in lines.withLock { $0.append(line) } }
        try await migrator.migrate(database)
        try await migrator.rollback(database)
        let shown = lines.withLock { $0 }
        #expect(shown.count == 2 && shown.allSatisfy { !$0.contains("\n") && !$0.contains("\u{1B}") }, "\(shown)")
        #expect(shown.first?.contains("0001_x\\u{a}applied 0002_forged.sql in 1 ms\\u{1b}[2J.sql") == true, "\(shown)")
    }

    @Test("a file name that is not UTF-8 is refused in one line saying so, not as a missing file")
    func nonUTF8Name() throws {
        let directory = try MigrationDirectory(["0001_a.sql": Self.table("a")])
        defer { directory.remove() }
        let name = Array((directory.path + "/0002_").utf8) + [0xFF, 0xFE] + Array("bad.sql".utf8)
        let descriptor = (name.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer { open($0.baseAddress!, O_CREAT | O_WRONLY, 0o644) }
        try #require(descriptor >= 0)
        close(descriptor)
        let error = #expect(throws: MigrationError.self) { try directory.migrator() }
        #expect(error?.message.contains("is not UTF-8") == true && error?.message.contains("\n") == false, "\(String(describing: error))")
    }
}
