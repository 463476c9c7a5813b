import Foundation
@testable import Repository

/// Where the example server's build and curl are.
enum ExampleServer {
    static let binary = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Examples/LiveServer/.build/debug/LiveServer").path
    static let curl = ["/usr/bin/curl", "/bin/curl"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static var isBuilt: Bool { FileManager.default.isExecutableFile(atPath: binary) && curl != nil }

    /// Runs curl with `arguments`; its standard output.
    static func curl(_ arguments: String...) async throws -> String { try await curl(arguments) }

    /// Runs curl with `arguments`; its standard output.
    static func curl(_ arguments: [String]) async throws -> String {
        let child = try ChildProcess(curl!, ["-s", "--max-time", "20"] + arguments, environment: [:])
        return String(decoding: await child.completion().output, as: UTF8.self)
    }
}

/// The example server running as a child process on a free port.
final class ExampleServerProcess: Sendable {
    let child: ChildProcess
    let port: Int
    var base: String { "http://127.0.0.1:\(port)" }

    /// Starts the server on `databaseURL` with `environment` added, and waits until it listens.
    init(databaseURL: String, environment: [String: String] = [:]) async throws {
        let port = try FreePort.find()
        let settings = ["DATABASE_URL": databaseURL, "PORT": String(port), "LOG_LEVEL": "warning"].merging(environment) { $1 }
        child = try ChildProcess(ExampleServer.binary, [], environment: ProcessInfo.processInfo.environment.merging(settings) { $1 })
        self.port = port
        guard try await eventually(timeout: .seconds(60), { Self.listens(on: port) }) else {
            kill(child.pid, SIGKILL)
            _ = child.wait()
            throw TestSetupError("the example server did not listen within 60 s")
        }
    }

    deinit {
        if child.exitStatusIfExited() == nil {
            kill(child.pid, SIGKILL)
            _ = child.wait()
        }
    }

    /// Sends SIGTERM and waits for the exit; its status.
    func stop() async throws -> Int32? {
        kill(child.pid, SIGTERM)
        var status: Int32?
        _ = try await eventually(timeout: .seconds(30)) {
            status = child.exitStatusIfExited()
            return status != nil
        }
        return status
    }

    /// The server's open descriptors, and how many of them are TCP sockets on its HTTP port
    /// (the listening one included), from `/proc`.
    func descriptors() -> (all: Int, http: Int) {
        let directory = "/proc/\(child.pid)/fd"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        let onPort = Self.socketInodes(port: port)
        let http = entries.count { entry in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\(entry)"),
                  target.hasPrefix("socket:["), let inode = UInt64(target.dropFirst(8).dropLast()) else { return false }
            return onPort.contains(inode)
        }
        return (entries.count, http)
    }

    /// The inodes of TCP sockets whose local port is `port` (`/proc/net/tcp` and `tcp6`).
    private static func socketInodes(port: Int) -> Set<UInt64> {
        var inodes = Set<UInt64>()
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            // Read to the end: /proc's tables come a page per read.
            guard let data = FileHandle(forReadingAtPath: table)?.readDataToEndOfFile() else { continue }
            let text = String(decoding: data, as: UTF8.self)
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 9, let local = fields[1].split(separator: ":").last, Int(local, radix: 16) == port,
                      let inode = UInt64(fields[9]) else { continue }
                inodes.insert(inode)
            }
        }
        return inodes
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    static func listens(on port: Int) -> Bool {
        guard let client = try? StreamClient(port: port) else { return false }
        client.close()
        return true
    }
}
