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
        try await Task.sleep(for: .seconds(120))  // Killed long before this ends.
    }

    @Test("a throwaway server whose owner is killed is stopped and deleted by its watchdog",
          .enabled(if: ProcessInfo.processInfo.environment["WATCHDOG_CHILD_REPORT"] == nil))
    func killedOwner() async throws {
        let report = FileManager.default.temporaryDirectory.path + "/watchdog-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: report) }
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        child.arguments = ["--testing-library", "swift-testing", "--filter", "watchdogChild"]
        child.environment = ProcessInfo.processInfo.environment.merging(["WATCHDOG_CHILD_REPORT": report]) { $1 }
        child.standardOutput = FileHandle.nullDevice
        child.standardError = FileHandle.nullDevice
        try child.run()
        #expect(try await eventually(timeout: .seconds(60)) { FileManager.default.fileExists(atPath: report) })
        let fields = try String(contentsOfFile: report, encoding: .utf8).split(separator: " ")
        let serverPID = try #require(Int32(fields[0]))
        let directory = String(fields[1])
        #expect(kill(serverPID, 0) == 0)

        kill(child.processIdentifier, SIGKILL)
        #expect(try await eventually(timeout: .seconds(30)) { kill(serverPID, 0) == -1 && errno == ESRCH })
        #expect(try await eventually(timeout: .seconds(30)) { !FileManager.default.fileExists(atPath: directory) })
    }
}
