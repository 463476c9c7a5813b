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

    /// Looks in `PG_BINDIR`, `PATH`, `pg_config --bindir`, `/usr/lib/postgresql/*/bin` (newest
    /// first) and Homebrew's prefixes.
    static func locate(environment: [String: String] = ProcessInfo.processInfo.environment,
                       searchesWellKnownDirectories: Bool = true) throws -> ServerBinaries {
        var candidates: [String] = []
        if let explicit = environment["PG_BINDIR"] { candidates.append(explicit) }
        candidates += (environment["PATH"] ?? "").split(separator: ":").map(String.init)
        if let bindir = pgConfigBindir(searchPath: candidates) { candidates.append(bindir) }
        if searchesWellKnownDirectories {
            candidates += versionedDirectories(in: "/usr/lib/postgresql", suffix: "/bin")
            candidates += versionedDirectories(in: "/opt/homebrew/opt", prefix: "postgresql", suffix: "/bin")
            candidates += versionedDirectories(in: "/usr/local/opt", prefix: "postgresql", suffix: "/bin")
            candidates += ["/opt/homebrew/bin", "/usr/local/bin", "/usr/local/pgsql/bin"]
        }
        let fileManager = FileManager.default
        for directory in candidates {
            let binaries = ServerBinaries(directory: directory)
            if fileManager.isExecutableFile(atPath: binaries.initdb), fileManager.isExecutableFile(atPath: binaries.pgCtl) {
                return binaries
            }
        }
        throw LocalServerError(ServerBinaries.installHint)
    }

    private static func pgConfigBindir(searchPath: [String]) -> String? {
        guard let pgConfig = searchPath.map({ $0 + "/pg_config" }).first(where: FileManager.default.isExecutableFile) else {
            return nil
        }
        let output = try? ShellCommand.runSync(pgConfig, ["--bindir"])
        return output?.trimmingCharacters(in: .whitespacesAndNewlines)
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
    /// What went wrong, with the server's own output when there is some.
    public let message: String

    init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}
