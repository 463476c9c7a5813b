import Foundation
@testable import Repository
import Testing

/// The example server's settings: one that cannot be used stops it at start-up with one line.
@Suite("Example server: settings", .enabled(if: ExampleServer.isBuilt))
struct ExampleServerSettingsTests {
    @Test("HEARTBEAT_SECONDS that is not a number of seconds from 0.1 to 3600 (inf, nan, 1e300, 0, -1, ten): one line on standard error, exit status 1, no crash")
    func badHeartbeat() async throws {
        for setting in ["inf", "nan", "1e300", "0", "-1", "ten"] {
            let child = try ChildProcess(ExampleServer.binary, [], environment: ProcessInfo.processInfo.environment.merging(
                ["DATABASE_URL": "postgres://nobody:secret@127.0.0.1:1/none", "PORT": String(try FreePort.find()), "HEARTBEAT_SECONDS": setting]) { $1 })
            let completion = await child.completion()
            let errors = String(decoding: completion.errors, as: UTF8.self)
            #expect(completion.status == 1, "\(setting): \(errors)")
            #expect(errors == "LiveServer: HEARTBEAT_SECONDS must be a number of seconds from 0.1 to 3600, not \"\(setting)\"\n", "\(setting)")
        }
    }

    @Test("PORT that is not a TCP port number from 1 to 65535 (99999, 65536, 0, -1, abc, empty, with a space): one line on standard error, exit status 1, never another port")
    func badPort() async throws {
        for setting in ["99999", "65536", "0", "-1", "abc", "", " 8080"] {
            let child = try ChildProcess(ExampleServer.binary, [], environment: ProcessInfo.processInfo.environment.merging(
                ["DATABASE_URL": "postgres://nobody:secret@127.0.0.1:1/none", "PORT": setting]) { $1 })
            let completion = await child.completion()
            let errors = String(decoding: completion.errors, as: UTF8.self)
            #expect(completion.status == 1, "\(setting): \(errors)")
            #expect(errors == "LiveServer: PORT must be a TCP port number from 1 to 65535, not \"\(setting)\"\n", "\(setting)")
        }
    }

    @Test("a PORT another program listens on: one line naming the port, exit status 1")
    func portInUse() async throws {
        let database = try await TestServer.makeDatabase()
        let held = try HeldPort()
        defer { withExtendedLifetime(held) {} }
        let child = try ChildProcess(ExampleServer.binary, [], environment: ProcessInfo.processInfo.environment.merging(
            ["DATABASE_URL": try await TestServer.connectionString(database: database.name()), "PORT": String(held.port)]) { $1 })
        let completion = await child.completion()
        let errors = String(decoding: completion.errors, as: UTF8.self)
        #expect(completion.status == 1, "\(errors)")
        #expect(errors == "LiveServer: another program listens on 127.0.0.1 port \(held.port): stop it, or set PORT to a free port\n")
    }
}
