import Foundation
import Repository
import Testing

/// `migrate up > log 2>&1`, as CI and deployment scripts run it: each progress line reaches the
/// file whole, as it happens, and an error lands on a line of its own.
@Suite("Progress output")
struct ProgressOutputTests {
    @Test("with output redirected to a file, each line is written whole and at once")
    func redirectedToAFile() async throws {
        let cli = try await MigrateCommandTests()
        let directory = try MigrationDirectory([
            "0001_a.sql": "-- migrate:up\nCREATE TABLE a (id int);\n",
            "0002_wait.sql": "-- migrate:up\nSELECT pg_advisory_xact_lock(4242);\n",
            "0003_fail.sql": "-- migrate:up\nSELECT 1/0;\n",
        ])
        defer { directory.remove() }
        let log = directory.path + "/log"
        try "".write(toFile: log, atomically: false, encoding: .utf8)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        defer { try? output.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("migrate")  // as MigrateCommandTests.run, but into a file
        process.arguments = ["up", "--dir", directory.path, "--database-url", cli.databaseURL]
        process.standardOutput = output
        process.standardError = output

        try await cli.database.withConnection { connection in
            try await connection.query("SELECT pg_advisory_lock(4242)")  // 0002 waits for it
            try process.run()
            // While the run waits inside 0002, 0001's line is in the file already.
            let first = try await eventually {
                (try? String(contentsOfFile: log, encoding: .utf8))?.contains("/0001_a.sql in ") == true
            }
            #expect(first, "the first progress line did not reach the file while the run went on")
            let text = try String(contentsOfFile: log, encoding: .utf8)
            #expect(text.hasSuffix(" ms\n") && !text.contains("0002"), "\(text)")
            try await connection.query("SELECT pg_advisory_unlock(4242)")
        }
        try #require(try await eventually(timeout: .seconds(60)) { !process.isRunning }, "migrate did not end")
        #expect(process.terminationStatus != 0)
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 4 && lines[3].isEmpty, "\(lines)")
        #expect(lines[0].hasPrefix("applied \(directory.path)/0001_a.sql in ") && lines[0].hasSuffix(" ms"), "\(lines)")
        #expect(lines[1].hasPrefix("applied \(directory.path)/0002_wait.sql in ") && lines[1].hasSuffix(" ms"), "\(lines)")
        #expect(lines[2].hasPrefix("migrate: \(directory.path)/0003_fail.sql:2: division by zero"), "\(lines)")
    }

    @Test("output that cannot be written (a full disk) fails migrate and demo with one line, not a success with the output lost",
          arguments: [["migrate", "status", "--json"], ["migrate", "new", "lost"], ["demo", "db", "url"]])
    func fullDisk(command: [String]) async throws {
        let cli = try await MigrateCommandTests()
        let directory = try MigrationDirectory(["0001_a.sql": "-- migrate:up\nCREATE TABLE a (id int);\n"])
        defer { directory.remove() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(command[0])
        process.arguments = Array(command.dropFirst()) + (command[0] == "migrate" ? ["--dir", directory.path] : [])
        process.environment = ["DATABASE_URL": cli.databaseURL, "PATH": "/usr/bin:/bin"]
        let full = try #require(FileHandle(forWritingAtPath: "/dev/full"))
        let errors = Pipe()
        (process.standardOutput, process.standardError) = (full, errors)
        try process.run()
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 74, "\(command): \(process.terminationStatus) \(said)")
        #expect(said.hasPrefix("\(command[0]): could not write standard output (No space left on device)") && said.filter { $0 == "\n" }.count == 1,
                "\(command): \(said)")
    }
}
