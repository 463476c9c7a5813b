import Foundation

/// Where PostgreSQL's server programs (`initdb`, `pg_ctl`, `postgres`) are installed.
struct ServerBinaries: Sendable {
    let directory: String

    var initdb: String { directory + "/initdb" }
    var pgCtl: String { directory + "/pg_ctl" }

    /// The install commands a missing server calls for, named in the error.
    static let installHint = """
        PostgreSQL's server programs (initdb, pg_ctl, postgres) were not found. Install them with \
        `apt-get install -y postgresql` (Debian/Ubuntu) or `brew install postgresql@16` (macOS), \
        set PG_BINDIR to their directory, or set DATABASE_URL to use a server you already run.
        """

    /// Looks in `PG_BINDIR`, `PATH`, `/usr/lib/postgresql/*/bin` (newest first), Homebrew's
    /// prefixes, and finally where `pg_config --bindir` points.
    static func locate(environment: [String: String] = ProcessInfo.processInfo.environment,
                       searchesWellKnownDirectories: Bool = true) async throws -> ServerBinaries {
        let searchPath = (environment["PATH"] ?? "").split(separator: ":").map(String.init)
        var candidates = environment["PG_BINDIR"].map { [$0] } ?? []
        candidates += searchPath
        if searchesWellKnownDirectories {
            candidates += versionedDirectories(in: "/usr/lib/postgresql", suffix: "/bin")
            candidates += versionedDirectories(in: "/opt/homebrew/opt", prefix: "postgresql", suffix: "/bin")
            candidates += versionedDirectories(in: "/usr/local/opt", prefix: "postgresql", suffix: "/bin")
            candidates += ["/opt/homebrew/bin", "/usr/local/bin", "/usr/local/pgsql/bin"]
        }
        if let found = candidates.lazy.map(ServerBinaries.init).first(where: \.isComplete) {
            return found
        }
        // Last resort, since it runs a program: pg_config names the bindir of its installation.
        if let pgConfig = searchPath.map({ $0 + "/pg_config" }).first(where: FileManager.default.isExecutableFile),
           let bindir = try? await ShellCommand.run(pgConfig, ["--bindir"], asServerAccount: false) {
            let binaries = ServerBinaries(directory: bindir.trimmingCharacters(in: .whitespacesAndNewlines))
            if binaries.isComplete { return binaries }
        }
        throw LocalServerError(ServerBinaries.installHint)
    }

    private var isComplete: Bool {
        FileManager.default.isExecutableFile(atPath: initdb) && FileManager.default.isExecutableFile(atPath: pgCtl)
    }

    /// Subdirectories such as `15`, `16` or `postgresql@16`, highest version first.
    private static func versionedDirectories(in parent: String, prefix: String = "", suffix: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: parent)) ?? []
        func version(_ name: String) -> Int {
            Int(name.dropFirst(prefix.count).filter(\.isNumber).prefix(3)) ?? 0
        }
        return names.filter { $0.hasPrefix(prefix) }
            .sorted { version($0) > version($1) }
            .map { "\(parent)/\($0)\(suffix)" }
    }
}

/// A local server could not be found, created, started or stopped.
public struct LocalServerError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, in one line, with the cause from the server's own output when there is one.
    public let message: String
    /// The whole output of the program that failed, if one did.
    public let output: String?
    /// The server's log, when it tells more and is still there.
    public internal(set) var logFile: String?

    init(_ message: String, output: String? = nil, logFile: String? = nil) {
        self.message = message
        self.output = output
        self.logFile = logFile
    }

    /// The message, and where the log is.
    public var description: String { message + (logFile.map { " (log: \($0))" } ?? "") }
}
