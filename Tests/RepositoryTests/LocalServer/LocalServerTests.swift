import Foundation
import Repository
import Testing

@Suite("Local server")
struct LocalServerTests {
    @Test("a throwaway server serves queries, and stop leaves no process and no files")
    func throwaway() async throws {
        let server = try await LocalServer.start(.throwaway)
        let pid = try #require(server.processID)
        let database = Database(server.configuration)
        #expect(try await database.query("SHOW fsync")[0].decode(String.self, at: 0) == "off")
        database.close()
        try await server.stop()
        #expect(kill(pid, 0) == -1 && errno == ESRCH)
        #expect(!FileManager.default.fileExists(atPath: server.directory))
    }

    @Test("a persistent server keeps its data across restarts and is reused while running")
    func persistent() async throws {
        let directory = FileManager.default.temporaryDirectory.path + "/lp-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try await LocalServer.start(.persistent(directory: directory))
        let database = Database(first.configuration)
        try await database.query("CREATE TABLE kept (value text)")
        try await database.query("INSERT INTO kept VALUES ($1)", ["still here"])
        database.close()
        let again = try await LocalServer.start(.persistent(directory: directory))
        #expect(again.processID == first.processID)
        try await first.stop()
        #expect(first.processID == nil)

        let restarted = try await LocalServer.start(.persistent(directory: directory))
        let reopened = Database(restarted.configuration)
        #expect(try await reopened.query("SELECT value FROM kept")[0].decode(String.self, at: 0) == "still here")
        reopened.close()
        try await restarted.stop()
        #expect(FileManager.default.fileExists(atPath: directory + "/data/PG_VERSION"))
    }

    @Test("docker-compose.yml's server has the settings LocalServer gives its own: logical WAL, connections, WAL senders, slots")
    func composeSettings() async throws {
        let server = try await LocalServer.start(.throwaway)
        defer { Task { try? await server.stop() } }
        let settings = try String(contentsOfFile: server.dataDirectory + "/local_server.conf", encoding: .utf8)
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let compose = try String(contentsOf: root.appendingPathComponent("docker-compose.yml"), encoding: .utf8)
        for name in ["wal_level", "max_connections", "max_wal_senders", "max_replication_slots"] {
            let line = try #require(settings.split(separator: "\n").first { $0.hasPrefix(name + " = ") })
            let value = line.dropFirst(name.count + 3)
            #expect(compose.contains("\"-c\", \"\(name)=\(value)\""), "\(name) = \(value) is not in docker-compose.yml")
        }
    }
}
