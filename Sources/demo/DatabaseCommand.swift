import ArgumentParser
import Foundation
import Repository

/// `demo db status|stop|reset`: the demo's own PostgreSQL server.
struct DatabaseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "db", abstract: "The demo's local PostgreSQL server: status, url, stop, reset.",
        subcommands: [Status.self, URL.self, Stop.self, Reset.self])

    struct URL: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a connection string for the demo's database (starting the local server if needed), for DATABASE_URL; one set already is printed unless it holds a password.")
        @OptionGroup var output: OutputOptions

        func run() async throws {
            if let url = DemoSession.databaseURL {
                // Passwords never appear in what demo prints: such a string stays where it is.
                guard SecretRedactor(scanning: [url]).redact(url) == url else {
                    throw DemoError("DATABASE_URL holds a password, which demo never prints: use DATABASE_URL itself")
                }
                return print(output.json ? Output.encode(["url": url]) : TerminalText.escaped(url))
            }
            let server = try await LocalServer.start(.persistent(directory: DemoSession.localDirectory))
            let url = "host=\(conninfoQuoted(server.socketDirectory)) port=\(server.port) user=\(server.superuser) dbname=postgres"
            print(output.json ? Output.encode(["url": url]) : TerminalText.escaped(url))
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Say which database the demo uses, and whether it is up.")
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let report = try await DatabaseStatus.current()
            print(output.json ? Output.encode(report) : report.text)
        }
    }

    struct Stop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop the local server (the data stays).")
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let directory = DemoSession.localDirectory
            let running = try await LocalServer.running(in: directory)
            let target = await DatabaseURLTarget.current(local: running)
            guard let server = running else {
                return print(output.json ? Output.encode(ServerAction(directory: directory, stopped: false, target: target))
                             : "The local server in \(TerminalText.escaped(directory)) is not running." + (target.sentence(stopped: true).map { " " + $0 } ?? ""))
            }
            try await server.stop()
            print(output.json ? Output.encode(ServerAction(directory: directory, stopped: true, target: target))
                  : "Stopped the local server in \(TerminalText.escaped(directory)). " + (target.sentence(stopped: true) ?? "The next demo command starts it again."))
        }
    }

    struct Reset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop the local server and delete its data.")
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let directory = DemoSession.localDirectory
            let target = await DatabaseURLTarget.current(local: try await LocalServer.running(in: directory))
            let usesDatabaseURL = target.sentence(stopped: false)
            // Only what the local server made there: other files stay, and so does the directory then.
            let deleted = try await LocalServer.delete(directory: directory)
            guard deleted else {
                // Files left there are not a server's (it deleted those): no server starts there.
                let others = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
                let next = others.isEmpty ? "The next demo command starts one."
                    : "It holds other files, so no demo command starts one there: set DEMO_DATA_DIRECTORY to a directory of its own, empty or new."
                return print(output.json ? Output.encode(ServerAction(directory: directory, deleted: false, target: target))
                             : "There is no local database in \(TerminalText.escaped(directory)). " + (usesDatabaseURL ?? next))
            }
            print(output.json ? Output.encode(ServerAction(directory: directory, deleted: true, target: target))
                  : "Deleted the local database in \(TerminalText.escaped(directory)). " + (usesDatabaseURL ?? "The next demo command starts a fresh one."))
        }
    }
}

/// What `db status` reports.
struct DatabaseStatus: Encodable {
    /// "DATABASE_URL" or "local".
    let source: String
    let running: Bool
    let directory: String?
    let processID: Int32?
    /// A psql command line that reaches the same database.
    let psql: String?

    static func current() async throws -> DatabaseStatus {
        if DemoSession.databaseURL != nil {
            var reachable = true
            do {
                let database = Database(try .environment(), maximumConnections: 1)
                defer { database.close() }
                _ = try await database.query("SELECT 1")
            } catch {
                reachable = false
            }
            return DatabaseStatus(source: "DATABASE_URL", running: reachable, directory: nil, processID: nil, psql: "psql \"$DATABASE_URL\"")
        }
        let directory = DemoSession.localDirectory
        let server = try await LocalServer.running(in: directory)
        return DatabaseStatus(source: "local", running: server != nil, directory: directory, processID: server?.processID,
                              psql: server.map { "psql -h \(shellQuoted($0.socketDirectory)) -p \($0.port) -U \($0.superuser) postgres" })
    }

    var text: String {
        if source == "DATABASE_URL" {
            return "Using DATABASE_URL: \(running ? "reachable" : "NOT reachable")."
        }
        guard running, let processID, let psql else {
            return "The local server in \(TerminalText.escaped(directory ?? "?")) is not running; the next demo command starts it."
        }
        return "The local server in \(TerminalText.escaped(directory ?? "?")) is running (pid \(processID)).\nConnect with: \(TerminalText.escaped(psql))"
    }
}

/// `text` as one word for a POSIX shell: as it is when it is plain, else in single quotes.
func shellQuoted(_ text: String) -> String {
    let plain = text.allSatisfy { $0.isLetter || $0.isNumber || "/._-+:@%".contains($0) }
    return plain && !text.isEmpty ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
}

/// `text` as a libpq conninfo value: as it is when plain, else single-quoted with \\ and \' escaped.
func conninfoQuoted(_ text: String) -> String {
    let plain = !text.isEmpty && text.allSatisfy { !$0.isWhitespace && $0 != "'" && $0 != "\\" }
    return plain ? text : "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
}

/// What `db stop --json` and `db reset --json` print.
private struct ServerAction: Encodable {
    var directory: String
    var stopped: Bool?
    var deleted: Bool?
    /// Set when `DATABASE_URL` is: whether the command left its database alone (false: it names
    /// the local server's).
    var databaseURLLeftAlone: Bool?

    init(directory: String, stopped: Bool? = nil, deleted: Bool? = nil, target: DatabaseURLTarget) {
        (self.directory, self.stopped, self.deleted, databaseURLLeftAlone) = (directory, stopped, deleted, target.leftAlone)
    }
}
