public import Foundation

/// A PostgreSQL server on this machine, started on demand with `initdb` and `pg_ctl`.
///
/// It listens on a unix socket in a private directory (and on a TCP port on 127.0.0.1 when
/// asked), with `trust` for the socket and `scram-sha-256` for TCP. When this process is root
/// the server runs as the unprivileged `postgres` account, as `initdb` requires.
///
/// ```swift
/// let server = try await LocalServer.start(.throwaway)
/// let database = Database(server.configuration)
/// // ...
/// try await server.stop()
/// ```
public final class LocalServer: Sendable {
    /// What happens to the server's files.
    public enum Mode: Sendable, Hashable {
        /// A temporary directory, fsync off, deleted on ``LocalServer/stop()`` — and by a
        /// watchdog if this process dies first. For tests.
        case throwaway
        /// A data directory kept across runs; a server already running there is reused. The
        /// directory is made if missing; an existing one must be empty or a local server's
        /// (``LocalServer/delete(directory:)`` deletes only what the server made there).
        case persistent(directory: String)
    }

    /// The mode the server was started in.
    public let mode: Mode
    /// The directory holding `data/`, the socket and `server.log`.
    public let directory: String
    /// The port: the TCP port when ``listensOnTCP``, otherwise only part of the socket's name.
    public let port: Int
    /// Whether the server accepts TCP connections on ``tcpAddress``:``port``.
    public let listensOnTCP: Bool
    /// The address it listens on for TCP (127.0.0.1 unless asked otherwise).
    public let tcpAddress: String
    /// The superuser, which connects over the socket without a password.
    public let superuser = "postgres"
    /// The write end of the throwaway watchdog's pipe, held open while the server should live.
    let watchdogPipe = Locked<Int32?>(nil)

    /// The cluster's data directory.
    public var dataDirectory: String { directory + "/data" }
    /// The directory of the unix socket (`.s.PGSQL.<port>`): ``directory``, unless its path
    /// cannot hold a socket (a comma, which libpq reads as a list of hosts, or too long for a
    /// unix socket's name) — then a short private directory under the temporary directory.
    public let socketDirectory: String
    /// The server's log.
    public var logFile: String { directory + "/server.log" }

    /// Connects as ``superuser`` to the `postgres` database over the unix socket.
    public var configuration: ConnectionConfiguration {
        ConnectionConfiguration(parameters: [
            ("host", socketDirectory), ("port", String(port)), ("user", superuser), ("dbname", "postgres"),
        ])
    }

    init(mode: Mode, directory: String, port: Int, listensOnTCP: Bool, tcpAddress: String = "127.0.0.1", socketDirectory: String? = nil) {
        self.mode = mode
        self.directory = directory
        self.port = port
        self.listensOnTCP = listensOnTCP
        self.tcpAddress = tcpAddress
        self.socketDirectory = socketDirectory ?? Self.socketDirectory(for: directory, port: port)
    }

    /// Where a server in `directory` puts its socket (see ``socketDirectory``).
    static func socketDirectory(for directory: String, port: Int) -> String {
        guard directory.contains(",") || "\(directory)/.s.PGSQL.\(port)".utf8.count >= 100 else { return directory }
        let digest = SHA256.hex(Array(directory.utf8)).prefix(12)
        return FileManager.default.temporaryDirectory.path + "/live-postgres-socket-\(digest)"
    }

    /// Creates the cluster if needed and starts the server.
    /// - Parameters:
    ///   - mode: throwaway (tests) or persistent (a reused data directory).
    ///   - tcpPort: nil for the unix socket only; 0 for a free TCP port; or a port number.
    ///   - tcpAddress: the address to listen on for TCP.
    /// - Throws: ``LocalServerError`` naming the install command when the server programs are
    ///   missing, or carrying `initdb`'s / the server log's words when they fail.
    ///   A relative persistent directory is taken from the current directory. A failed start
    ///   removes what it created (a throwaway directory, or a persistent one it made itself).
    ///   A persistent server already running is reused when it listens as asked: on TCP when
    ///   `tcpPort` is 0, on that port when it is one; otherwise this throws.
    public static func start(_ mode: Mode = .throwaway, tcpPort: Int? = nil, tcpAddress: String = "127.0.0.1") async throws -> LocalServer {
        let binaries = try await ServerBinaries.locate()
        let (directory, created) = try prepareDirectory(for: mode)
        // From the start: a throwaway directory goes also when this process dies while `initdb` runs.
        var watchdog: Int32?
        do {
            if mode == .throwaway { watchdog = try startWatchdog(for: directory) }
            let server = try await start(mode, in: directory, tcpPort: tcpPort, tcpAddress: tcpAddress, binaries: binaries)
            server.watchdogPipe.withLock { $0 = watchdog }
            return server
        } catch var error as LocalServerError where created {
            removeCreated(directory)
            watchdog.map { _ = close($0) }
            // The log went with the directory.
            error.logFile = nil
            throw error
        } catch {
            if created { removeCreated(directory) }
            watchdog.map { _ = close($0) }
            throw error
        }
    }

    private static func start(_ mode: Mode, in directory: String, tcpPort: Int?, tcpAddress: String, binaries: ServerBinaries) async throws -> LocalServer {
        let port = try tcpPort.map { $0 == 0 ? try FreePort.find() : $0 } ?? 5432
        let server = LocalServer(mode: mode, directory: directory, port: port, listensOnTCP: tcpPort != nil, tcpAddress: tcpAddress)
        let socketPath = "\(server.socketDirectory)/.s.PGSQL.\(port)"
        guard socketPath.utf8.count < 100 else {
            throw LocalServerError("the socket path \(socketPath) is too long for a unix socket; choose a shorter temporary directory")
        }
        if server.socketDirectory != directory {
            try FileManager.default.createDirectory(atPath: server.socketDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try ShellCommand.handOver(server.socketDirectory)
        }
        var startLock: StartLock?
        defer { withExtendedLifetime(startLock) {} }  // held until the server runs
        if case .persistent = mode {
            startLock = try await StartLock.acquire(for: directory)
            if let running = try await server.runningInstance() { return try running.listening(asAskedBy: tcpPort) }
        }
        if !FileManager.default.fileExists(atPath: server.dataDirectory + "/PG_VERSION") {
            try await server.initializeCluster(binaries)
        }
        try server.includeSettings()
        try server.writeSettings()
        // A pid file left by a server that died (its pid perhaps reused by another program)
        // would make the new server refuse to start.
        if server.processID == nil { try? FileManager.default.removeItem(atPath: server.dataDirectory + "/postmaster.pid") }
        // The log's earlier lines tell of earlier runs: a failure is told by what this start wrote.
        let logStart = (try? FileManager.default.attributesOfItem(atPath: server.logFile)[.size] as? Int) ?? 0
        do {
            _ = try await ShellCommand.run(binaries.pgCtl, ["-D", server.dataDirectory, "-l", server.logFile, "-w", "-t", "60", "start"])
        } catch {
            throw LocalServerError("the server in \(directory) did not start: \(server.logCause(from: logStart) ?? "\(error)")", logFile: server.logFile)
        }
        return server
    }

    /// The persistent server running in `directory`, if one is; nil otherwise. Starts nothing.
    /// - Throws: ``LocalServerError`` when this process may not look into the directory's
    ///   cluster (another user's server), so cannot tell.
    public static func running(in directory: String) async throws -> LocalServer? {
        let server = LocalServer(mode: .persistent(directory: directory), directory: directory, port: 5432, listensOnTCP: false)
        if access(server.dataDirectory, F_OK) == 0, access(server.dataDirectory, R_OK | X_OK) != 0 {
            throw LocalServerError("cannot tell whether a server runs in \(TerminalText.escaped(directory, limit: 400)): \(String(cString: strerror(errno))) reading its cluster (it belongs to another user)")
        }
        return try await server.runningInstance()
    }

    /// Stops the server and waits until its processes are gone; a throwaway server's
    /// directory is deleted.
    public func stop() async throws {
        let binaries = try await ServerBinaries.locate()
        if let pid = processID {
            let shutdown = mode == .throwaway ? "immediate" : "fast"
            _ = try await ShellCommand.run(binaries.pgCtl, ["-D", dataDirectory, "-m", shutdown, "-w", "-t", "60", "stop"])
            // pg_ctl returns once the pid file is gone; the postmaster may still be exiting.
            let deadline = ContinuousClock.now + .seconds(30)
            while kill(pid, 0) == 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        if mode == .throwaway {
            try? FileManager.default.removeItem(atPath: directory)
            releaseWatchdog()
        }
        removeSocketDirectory()
    }

    /// The postmaster's process ID while it runs (from `postmaster.pid`), else nil — also when
    /// the file names a process that is not this directory's postmaster (a stale file whose
    /// pid was reused).
    public var processID: Int32? {
        guard let contents = try? String(contentsOfFile: dataDirectory + "/postmaster.pid", encoding: .utf8),
              let first = contents.split(separator: "\n").first, let pid = Int32(first),
              kill(pid, 0) == 0 || errno == EPERM, isPostmaster(pid)
        else { return nil }
        return pid
    }

    /// Whether `pid` is a postmaster of this data directory: it runs there (its working
    /// directory, on Linux). Elsewhere, a live process is taken for it.
    private func isPostmaster(_ pid: Int32) -> Bool {
        #if os(Linux)
        guard let cwd = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/cwd") else { return false }
        return URL(fileURLWithPath: cwd).resolvingSymlinksInPath().path == URL(fileURLWithPath: dataDirectory).resolvingSymlinksInPath().path
        #else
        return true
        #endif
    }

    /// The directory for a persistent server called `name`: the path in the environment
    /// variable `variable` when it is set (a relative one taken from the current directory),
    /// otherwise ``defaultDirectory(named:environment:)``. The demo and `migrate` agree on it.
    public static func directory(named name: String, overriddenBy variable: String,
                                 environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        guard let given = environment[variable], !given.isEmpty else { return defaultDirectory(named: name, environment: environment) }
        return URL(fileURLWithPath: given).standardizedFileURL.path
    }

    /// A per-user directory for a persistent server called `name`: under `$XDG_DATA_HOME` (or
    /// `~/.local/share`; `~/Library/Application Support` on macOS), or under `/var/lib` when
    /// root — whose home the unprivileged server account cannot enter.
    public static func defaultDirectory(named name: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if ShellCommand.isRoot { return "/var/lib/swift-live-postgres/\(name)" }
        let home = environment["HOME"] ?? NSHomeDirectory()
        #if os(macOS)
        let base = home + "/Library/Application Support"
        #else
        let base = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.local/share"
        #endif
        return "\(base)/swift-live-postgres/\(name)"
    }
}
