import Foundation
import Repository

/// Which database `DATABASE_URL` names, as `db stop` and `db reset` must say: another server's,
/// which they leave alone, or the local server's own (the URL `db url` prints), which they stop
/// or delete with it.
enum DatabaseURLTarget {
    case none
    case elsewhere
    case localServer

    /// Where `DATABASE_URL` leads, asked before `server` (the local one, if running) is touched:
    /// the local server when the backend serving the URL is a child of that server's postmaster.
    static func current(local server: LocalServer?) async -> DatabaseURLTarget {
        guard DemoSession.databaseURL != nil else { return .none }
        guard let postmaster = server?.processID else { return .elsewhere }
        do {
            var configuration = try ConnectionConfiguration.environment()
            configuration.connectTimeout = 3  // a server that does not answer is not the local one
            let database = Database(configuration, maximumConnections: 1)
            defer { database.close() }
            let backend = try await database.query("SELECT pg_backend_pid()")[0].decode(Int32.self, at: 0)
            return parent(of: backend) == postmaster ? .localServer : .elsewhere
        } catch {
            return .elsewhere
        }
    }

    /// The parent of process `pid` on this machine, from `/proc` (nil where there is none).
    private static func parent(of pid: Int32) -> Int32? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // pid (comm) state ppid …: comm may hold spaces and parentheses, so after its last ")".
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 1 ? Int32(fields[1]) : nil
    }

    /// What `db stop` or `db reset` says after acting, beside its own sentence (nil: nothing).
    func sentence(stopped: Bool) -> String? {
        switch self {
        case .none: nil
        case .elsewhere: "DATABASE_URL is set: demo uses that database, which this leaves alone."
        case .localServer: stopped
            ? "DATABASE_URL names this local server: with it set, demo commands fail until a demo command without it starts the server again."
            : "DATABASE_URL named this local server's database, which is deleted with it."
        }
    }

    /// For `--json`: whether the command left `DATABASE_URL`'s database alone (nil: not set).
    var leftAlone: Bool? {
        switch self {
        case .none: nil
        case .elsewhere: true
        case .localServer: false
        }
    }
}
