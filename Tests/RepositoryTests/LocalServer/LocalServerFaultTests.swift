import Foundation
@testable import Repository
import Testing

@Suite("Local server faults")
struct LocalServerFaultTests {
    @Test("missing server programs: the error names the apt and Homebrew install commands")
    func missingBinaries() async {
        let error = await #expect(throws: LocalServerError.self) {
            try await ServerBinaries.locate(environment: ["PATH": "/nonexistent"], searchesWellKnownDirectories: false)
        }
        #expect(error?.message.contains("apt-get install -y postgresql") == true)
        #expect(error?.message.contains("brew install postgresql") == true)
    }

    @Test("as root, the server runs as the postgres account", .enabled(if: geteuid() == 0))
    func unprivilegedServer() async throws {
        let server = try await LocalServer.start(.throwaway)
        let pid = try #require(server.processID)
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let uid = status.split(separator: "\n").first { $0.hasPrefix("Uid:") }?.split(separator: "\t").dropFirst().first
        #expect(uid.flatMap { UInt32($0) } == getpwnam("postgres")?.pointee.pw_uid)
        try await server.stop()
    }

    /// Run in a child process by `killedOwner`: starts a throwaway server, reports where, waits.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["WATCHDOG_CHILD_REPORT"] != nil))
    func watchdogChild() async throws {
        let report = try #require(ProcessInfo.processInfo.environment["WATCHDOG_CHILD_REPORT"])
        let server = try await LocalServer.start(.throwaway)
        let pid = try #require(server.processID)
        try "\(pid) \(server.directory)".write(toFile: report, atomically: true, encoding: .utf8)
        // Killed long before this ends: the owner being starved of time must not end it first.
        try await Task.sleep(for: .seconds(900))
    }

    @Test("a throwaway server whose owner is killed is stopped and deleted by its watchdog",
          .enabled(if: ProcessInfo.processInfo.environment["WATCHDOG_CHILD_REPORT"] == nil))
    func killedOwner() async throws {
        let report = FileManager.default.temporaryDirectory.path + "/watchdog-\(UInt32.random(in: 0...UInt32.max))"
        let output = report + ".out"
        defer { try? FileManager.default.removeItem(atPath: report); try? FileManager.default.removeItem(atPath: output) }
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        child.arguments = ["--testing-library", "swift-testing", "--filter", "watchdogChild"]
        child.environment = ProcessInfo.processInfo.environment.merging(["WATCHDOG_CHILD_REPORT": report]) { $1 }
        // Kept, to say why should the child end before it is killed.
        let childOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        defer { try? childOutput.close() }
        child.standardOutput = childOutput
        child.standardError = childOutput
        try child.run()
        defer { if child.isRunning { kill(child.processIdentifier, SIGKILL) } }
        #expect(try await eventually(timeout: .seconds(60)) { FileManager.default.fileExists(atPath: report) })
        let fields = try String(contentsOfFile: report, encoding: .utf8).split(separator: " ")
        let serverPID = try #require(Int32(fields[0]))
        let directory = String(fields[1])
        #expect(kill(serverPID, 0) == 0, "the server was gone before its owner was killed; the owner \(child.isRunning ? "runs" : "ended (status \(child.terminationStatus))") and wrote: \((try? String(contentsOfFile: output, encoding: .utf8))?.suffix(3000) ?? "")")

        kill(child.processIdentifier, SIGKILL)
        #expect(try await eventually(timeout: .seconds(30)) { kill(serverPID, 0) == -1 && errno == ESRCH })
        #expect(try await eventually(timeout: .seconds(30)) { !FileManager.default.fileExists(atPath: directory) })
    }
}

/// LocalServer under the ways a machine surprises it.
@Suite("Local server start-up faults")
struct LocalServerStartupTests {
    static func scratch(_ name: String) -> String {
        FileManager.default.temporaryDirectory.path + "/\(name)-\(UInt32.random(in: 0...UInt32.max))"
    }

    @Test("a stale postmaster.pid naming an unrelated live process: not taken for a running server, and the server starts")
    func stalePidFile() async throws {
        let directory = Self.scratch("stale-pid")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try await LocalServer.start(.persistent(directory: directory))
        try await first.stop()
        // The pid of a process that is alive but is no postmaster: this test's own.
        try "\(getpid())\n\(first.dataDirectory)\n0\n5432\n\(directory)\n\n".write(toFile: first.dataDirectory + "/postmaster.pid", atomically: true, encoding: .utf8)
        #expect(first.processID == nil)
        #expect(try await LocalServer.running(in: directory) == nil)
        let server = try await LocalServer.start(.persistent(directory: directory))
        let pid = try #require(server.processID)
        #expect(pid != getpid())
        #expect(try await Database(server.configuration, maximumConnections: 1).query("SELECT 1").count == 1)
        try await server.stop()
    }

    @Test("a data directory whose path holds a quote, a comma and spaces works")
    func awkwardPath() async throws {
        let directory = FileManager.default.temporaryDirectory.path + "/it's, a dir \(UInt16.random(in: 0...UInt16.max))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await LocalServer.start(.persistent(directory: directory))
        let database = Database(server.configuration, maximumConnections: 1)
        #expect(try await database.query("SELECT current_setting('data_directory')")[0].decode(String.self, at: 0).contains("it's, a dir"))
        database.close()
        try await server.stop()
    }

    @Test("a directory whose name the shell would read — $(…), a backtick, a double quote, a backslash — is refused before anything runs",
          arguments: ["$(touch MARK)", "`touch MARK`", "x\" ; touch MARK ; \"", "a\\b", "line\nbreak"])
    func shellSpecialPath(name: String) async throws {
        let base = FileManager.default.temporaryDirectory.path + "/lp-shell-\(UInt32.random(in: 0...UInt32.max))"
        let mark = base + "-ran"
        let directory = base + "/" + name.replacingOccurrences(of: "MARK", with: mark)
        defer { try? FileManager.default.removeItem(atPath: base) }
        let error = await #expect(throws: LocalServerError.self) { try await LocalServer.start(.persistent(directory: directory)) }
        #expect(error?.message.contains("which pg_ctl would hand to the shell") == true, "\(error.map { "\($0)" } ?? "")")
        #expect(error?.message.contains("\n") == false)
        #expect(!FileManager.default.fileExists(atPath: mark))
        #expect(!FileManager.default.fileExists(atPath: base))
    }

    @Test("initdb's failure is reported by the line that states the cause", .enabled(if: geteuid() == 0))
    func initdbCause() async throws {
        // A parent only root may enter: the server account cannot reach the data directory.
        let parent = Self.scratch("locked-parent")
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let error = await #expect(throws: LocalServerError.self) { try await LocalServer.start(.persistent(directory: parent + "/db")) }
        let message = error?.message ?? ""
        #expect(message.contains("Permission denied") || message.contains("could not"), "\(message)")
        #expect(!message.contains("The files belonging to this database system"), "\(message)")
        #expect(!message.contains("\n"), "one line: \(message)")
        #expect(!FileManager.default.fileExists(atPath: parent + "/db"), "a failed start removes the directory it made")
    }

    @Test("a throwaway server whose port is taken fails, naming the cause, and leaves no directory behind")
    func portInUse() async throws {
        let held = try HeldPort()
        defer { withExtendedLifetime(held) {} }
        let error = await #expect(throws: LocalServerError.self) { try await LocalServer.start(.throwaway, tcpPort: held.port) }
        let message = error?.message ?? ""
        // The log went with the directory: the message does not point at it.
        #expect(error?.logFile == nil && !"\(error.map { "\($0)" } ?? "")".contains("log:"), "\(message)")
        let directory = try #require(message.firstRange(of: /in (\/[^ ]*live-postgres-[^ ]*) did not start/).map { String(message[$0].dropFirst(3).dropLast(14)) })
        #expect(!FileManager.default.fileExists(atPath: directory), "\(directory) was left behind")
    }

    @Test("a relative directory is taken from the current directory; demo and migrate agree on DEMO_DATA_DIRECTORY")
    func directoryNames() {
        let cwd = FileManager.default.currentDirectoryPath
        #expect(LocalServer.directory(named: "demo", overriddenBy: "X", environment: ["X": "data/db"]) == cwd + "/data/db")
        #expect(LocalServer.directory(named: "demo", overriddenBy: "X", environment: ["X": "/srv/../srv/db"]) == "/srv/db")
        #expect(LocalServer.directory(named: "demo", overriddenBy: "X", environment: [:]) == LocalServer.defaultDirectory(named: "demo", environment: [:]))
    }

    @Test("migrate without a URL uses DEMO_DATA_DIRECTORY's server, like the demo")
    func migrateHonoursDemoDirectory() async throws {
        let directory = Self.scratch("migrate-demo")
        let environment = ProcessInfo.processInfo.environment.filter { $0.key != "DATABASE_URL" }.merging(["DEMO_DATA_DIRECTORY": directory]) { $1 }
        let bin = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        defer {
            let stop = try? ChildProcess(bin.appendingPathComponent("demo").path, ["db", "reset"], environment: environment)
            _ = stop?.wait()
            try? FileManager.default.removeItem(atPath: directory)
            try? FileManager.default.removeItem(atPath: directory + ".lock")
        }
        let migrations = try MigrationDirectory()
        defer { migrations.remove() }
        let run = try ChildProcess(bin.appendingPathComponent("migrate").path, ["status", "--dir", migrations.path], environment: environment)
        let completion = await run.completion()
        let errors = String(decoding: completion.errors, as: UTF8.self)
        #expect(completion.status == 0, "\(errors)")
        #expect(errors.contains(directory), "\(errors)")
        #expect(try await LocalServer.running(in: directory) != nil)
    }
}
