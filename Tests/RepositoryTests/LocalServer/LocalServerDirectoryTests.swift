import Foundation
@testable import Repository
import Testing

/// A persistent server's directory holds what the server made, and only that is deleted; a
/// start cut short leaves nothing that a later start takes for a made cluster.
@Suite("Local server directories")
struct LocalServerDirectoryTests {
    static func owner(of path: String) throws -> UInt32 {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.ownerAccountID] as? UInt32)
    }

    @Test("a directory holding files no server made is refused, left as it was; delete(directory:) deletes only what the server made")
    func foreignFiles() async throws {
        let directory = LocalServerStartupTests.scratch("project")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory + "/src", withIntermediateDirectories: true)
        try "code".write(toFile: directory + "/src/main.swift", atomically: true, encoding: .utf8)
        let owner = try Self.owner(of: directory)
        let error = await #expect(throws: LocalServerError.self) { try await LocalServer.start(.persistent(directory: directory)) }
        #expect(error?.message.contains("already holds files a local server did not make (src)") == true, "\(error.map { "\($0)" } ?? "")")
        #expect(try Self.owner(of: directory) == owner)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["src"])
        #expect(try await LocalServer.delete(directory: directory) == false)  // nothing of a server there
        #expect(FileManager.default.fileExists(atPath: directory + "/src/main.swift"))

        // A folder of the user's named `data`, with a `server.log` beside it: not a server's (a stranger's run).
        let named = LocalServerStartupTests.scratch("named-data")
        defer { try? FileManager.default.removeItem(atPath: named) }
        try FileManager.default.createDirectory(atPath: named + "/data/2025", withIntermediateDirectories: true)
        try "1,2".write(toFile: named + "/data/2025/sales.csv", atomically: true, encoding: .utf8)
        let refused = await #expect(throws: LocalServerError.self) { try await LocalServer.start(.persistent(directory: named)) }
        #expect(refused?.message.contains("did not make (data)") == true, "\(refused.map { "\($0)" } ?? "")")
        try "log".write(toFile: named + "/server.log", atomically: true, encoding: .utf8)
        #expect(try await LocalServer.delete(directory: named) == false)
        #expect(try FileManager.default.contentsOfDirectory(atPath: named).sorted() == ["data", "server.log"])
        #expect(FileManager.default.fileExists(atPath: named + "/data/2025/sales.csv"))

        // Files added beside a server's: deleting it leaves them, and the directory.
        let server = LocalServerStartupTests.scratch("server")
        defer { try? FileManager.default.removeItem(atPath: server) }
        try await LocalServer.start(.persistent(directory: server)).stop()
        // Its cluster named by mistake: nothing is deleted, and no lock file is left beside it,
        // in the server's directory, where it would be a file no server made (a stranger's run).
        #expect(try await LocalServer.delete(directory: server + "/data") == false)
        #expect(try FileManager.default.contentsOfDirectory(atPath: server).allSatisfy { LocalServer.isOwnEntry($0, in: server) })
        // A cluster holding a file the server did not make (Finder's, a standby's signal) is still its own.
        try "".write(toFile: server + "/data/.DS_Store", atomically: true, encoding: .utf8)
        try await LocalServer.start(.persistent(directory: server)).stop()
        try "notes".write(toFile: server + "/notes.txt", atomically: true, encoding: .utf8)
        #expect(try await LocalServer.delete(directory: server))
        #expect(try FileManager.default.contentsOfDirectory(atPath: server) == ["notes.txt"])
        // Its log left alone (the cluster deleted by hand): a start takes it as its own.
        let logOnly = LocalServerStartupTests.scratch("log-only")
        defer { try? FileManager.default.removeItem(atPath: logOnly) }
        try await LocalServer.start(.persistent(directory: logOnly)).stop()
        try FileManager.default.removeItem(atPath: logOnly + "/data")
        try await LocalServer.start(.persistent(directory: logOnly)).stop()
        // A server's alone, running: stopped, and the directory goes.
        let alone = LocalServerStartupTests.scratch("alone")
        _ = try await LocalServer.start(.persistent(directory: alone))
        #expect(try await LocalServer.delete(directory: alone))
        #expect(!FileManager.default.fileExists(atPath: alone))
        #expect(try await LocalServer.delete(directory: alone) == false)
    }

    @Test("a first start cut short — a half-made cluster, a data/ without PG_VERSION — is made again; a cluster missing the settings' include gets it")
    func interruptedFirstStart() async throws {
        let directory = LocalServerStartupTests.scratch("interrupted")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory + "/data.initializing-1-2/base", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: directory + "/data/global", withIntermediateDirectories: true)
        let server = try await LocalServer.start(.persistent(directory: directory))
        let database = Database(server.configuration, maximumConnections: 1)
        #expect(try await database.query("SHOW wal_level")[0].decode(String.self, at: 0) == "logical")
        database.close()
        try await server.stop()
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("data.") }.isEmpty)

        // What an interrupted start of an earlier version left: a cluster without the include line.
        let configuration = server.dataDirectory + "/postgresql.conf"
        let settings = try String(contentsOfFile: configuration, encoding: .utf8)
        try settings.replacingOccurrences(of: "include_if_exists = 'local_server.conf'", with: "").write(toFile: configuration, atomically: false, encoding: .utf8)
        let again = try await LocalServer.start(.persistent(directory: directory))
        let reopened = Database(again.configuration, maximumConnections: 1)
        #expect(try await reopened.query("SHOW max_connections")[0].decode(String.self, at: 0) == "300")
        reopened.close()
        try await again.stop()
    }

    @Test("a failed start is told by what it wrote to the log, not by an older line")
    func staleLogLine() async throws {
        let directory = LocalServerStartupTests.scratch("stale-log")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try await LocalServer.start(.persistent(directory: directory))
        try await first.stop()
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: first.logFile))
        log.seekToEndOfFile()
        log.write(Data("2026-01-01 00:00:00 UTC [1] FATAL:  database \"old\" does not exist\n".utf8))
        try log.close()
        let held = try HeldPort()  // so that the server cannot listen
        defer { withExtendedLifetime(held) {} }
        let error = await #expect(throws: LocalServerError.self) {
            try await LocalServer.start(.persistent(directory: directory), tcpPort: held.port)
        }
        let message = error?.message ?? ""
        #expect(!message.contains("\"old\""), "\(message)")
        #expect(message.contains("Address already in use") || message.contains("could not create"), "\(message)")
        #expect(error?.logFile == first.logFile)
    }

    @Test("a server running on its unix socket only is not reused for a start that asks for TCP: refused, saying so")
    func runningWithoutTCP() async throws {
        let directory = LocalServerStartupTests.scratch("socket-only")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await LocalServer.start(.persistent(directory: directory))
        let error = await #expect(throws: LocalServerError.self) { try await LocalServer.start(.persistent(directory: directory), tcpPort: 0) }
        #expect(error?.message.contains("listens on its unix socket only, not on a TCP port as asked") == true, "\(error.map { "\($0)" } ?? "")")
        #expect(try await LocalServer.start(.persistent(directory: directory)).processID == server.processID)
        try await server.stop()
    }
}
