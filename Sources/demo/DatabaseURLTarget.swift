import Foundation
import Repository

/// Which database `DATABASE_URL` names, as `db stop` and `db reset` must say: another server's,
/// which they leave alone, or the local server's own (the URL `db url` prints), which they stop
/// or delete with it.
enum DatabaseURLTarget {
    case none
    case elsewhere
    case localServer
    /// The local server is not running and `DATABASE_URL`'s server did not answer: it may be it.
    case unknown

    /// Where `DATABASE_URL` leads, asked before `server` (the local one, if running) is touched:
    /// the local server when both answer as one server — the cluster's system identifier and
    /// the postmaster's start time, which any role may read, on any platform.
    static func current(local server: LocalServer?) async -> DatabaseURLTarget {
        guard DemoSession.databaseURL != nil, var url = try? ConnectionConfiguration.environment() else { return .none }
        url.connectTimeout = 3  // a server that does not answer is not the running local one
        let theirs = await identity(url)
        guard let server else { return theirs == nil ? .unknown : .elsewhere }
        guard let theirs, let ours = await identity(server.configuration) else { return .elsewhere }
        return theirs == ours ? .localServer : .elsewhere
    }

    /// The server's cluster and start, or nil when it cannot be asked.
    private static func identity(_ configuration: ConnectionConfiguration) async -> String? {
        let database = Database(configuration, maximumConnections: 1)
        defer { database.close() }
        return try? await database.query("SELECT system_identifier::text || ' ' || pg_postmaster_start_time()::text FROM pg_control_system()")[0]
            .decode(String.self, at: 0)
    }

    /// What `db stop` or `db reset` says after acting, beside its own sentence (nil: nothing).
    func sentence(stopped: Bool) -> String? {
        switch self {
        case .none: nil
        case .elsewhere: "DATABASE_URL is set: demo uses that database, which this leaves alone."
        case .localServer: stopped
            ? "DATABASE_URL names this local server: with it set, demo commands fail until a demo command without it starts the server again."
            : "DATABASE_URL named this local server's database, which is deleted with it."
        case .unknown: "DATABASE_URL is set, and its server did not answer: if it names this local server, this \(stopped ? "left it stopped" : "deleted its database too")."
        }
    }

    /// For `--json`: whether the command left `DATABASE_URL`'s database alone (nil: not set, or not known).
    var leftAlone: Bool? {
        switch self {
        case .none, .unknown: nil
        case .elsewhere: true
        case .localServer: false
        }
    }
}
