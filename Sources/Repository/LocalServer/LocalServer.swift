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
        /// A data directory kept across runs; a server already running there is reused.
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
    private let watchdogPipe = Locked<Int32?>(nil)

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

    private init(mode: Mode, directory: String, port: Int, listensOnTCP: Bool, tcpAddress: String = "127.0.0.1", socketDirectory: String? = nil) {
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
    public static func start(_ mode: Mode = .throwaway, tcpPort: Int? = nil, tcpAddress: String = "127.0.0.1") async throws -> LocalServer {
        let binaries = try await ServerBinaries.locate()
        let (directory, created) = try prepareDirectory(for: mode)
        do {
            return try await start(mode, in: directory, tcpPort: tcpPort, tcpAddress: tcpAddress, binaries: binaries)
        } catch {
            if created { try? FileManager.default.removeItem(atPath: directory) }
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
            if let running = try await server.runningInstance() { return running }
        }
        if !FileManager.default.fileExists(atPath: server.dataDirectory + "/PG_VERSION") {
            try await server.initializeCluster(binaries)
        }
        try server.writeSettings()
        // A pid file left by a server that died (its pid perhaps reused by another program)
        // would make the new server refuse to start.
        if server.processID == nil { try? FileManager.default.removeItem(atPath: server.dataDirectory + "/postmaster.pid") }
        do {
            _ = try await ShellCommand.run(binaries.pgCtl, ["-D", server.dataDirectory, "-l", server.logFile, "-w", "-t", "60", "start"])
        } catch {
            throw LocalServerError("the server in \(directory) did not start: \(server.logCause() ?? "\(error)") (log: \(server.logFile))")
        }
        if mode == .throwaway {
            try server.startWatchdog()
        }
        return server
    }

    /// The persistent server running in `directory`, if one is; nil otherwise. Starts nothing.
    public static func running(in directory: String) async throws -> LocalServer? {
        try await LocalServer(mode: .persistent(directory: directory), directory: directory, port: 5432, listensOnTCP: false)
            .runningInstance()
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

    // MARK: - Steps

    /// The server's directory, and whether this call created it.
    private static func prepareDirectory(for mode: Mode) throws -> (path: String, created: Bool) {
        let path: String
        var created = true
        switch mode {
        case .throwaway:
            let template = FileManager.default.temporaryDirectory.path + "/live-postgres-XXXXXX"
            var bytes = Array(template.utf8CString)
            guard let made = mkdtemp(&bytes) else {
                throw LocalServerError("could not create a temporary directory: \(String(cString: strerror(errno)))")
            }
            path = String(cString: made)
        case .persistent(let directory):
            path = URL(fileURLWithPath: directory).standardizedFileURL.path
            created = !FileManager.default.fileExists(atPath: path)
            do {
                // Parents keep the usual permissions, so the server account can pass through them.
                try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw LocalServerError("could not create the server's directory \(path): \(Self.reason(error))")
            }
        }
        do {
            try ShellCommand.handOver(path)
        } catch {
            if created { try? FileManager.default.removeItem(atPath: path) }
            throw error
        }
        return (path, created)
    }

    /// The system's reason behind a Foundation file error, in words.
    private static func reason(_ error: any Error) -> String {
        let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
        if let code = underlying?.code, underlying?.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(code))) }
        return (error as NSError).localizedFailureReason ?? (error as NSError).localizedDescription
    }

    private func initializeCluster(_ binaries: ServerBinaries) async throws {
        var arguments = ["-D", dataDirectory, "-U", superuser, "-E", "UTF8", "--locale=C",
                         "--auth-local=trust", "--auth-host=scram-sha-256"]
        if mode == .throwaway { arguments.append("--no-sync") }
        do {
            _ = try await ShellCommand.run(binaries.initdb, arguments)
        } catch let error as LocalServerError {
            throw LocalServerError("initdb could not create the cluster in \(dataDirectory): \(ShellCommand.cause(in: error.output ?? error.message))")
        }
        try append("\ninclude_if_exists = 'local_server.conf'\n", to: dataDirectory + "/postgresql.conf")
        // Clients on networks this machine is on (a TCP address other than 127.0.0.1), with a password.
        try append("\nhost all all samenet scram-sha-256\n", to: dataDirectory + "/pg_hba.conf")
    }

    private func append(_ text: String, to path: String) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        handle.seekToEndOfFile()
        handle.write(Data(text.utf8))
        try handle.close()
    }

    /// Settings rewritten at every start: where to listen, and speed over durability for tests.
    private func writeSettings() throws {
        var settings = """
            listen_addresses = '\(listensOnTCP ? Self.configurationList(tcpAddress) : "")'
            port = \(port)
            unix_socket_directories = '\(Self.configurationList(socketDirectory))'
            max_connections = 300
            wal_level = logical
            max_wal_senders = 64
            max_replication_slots = 64
            """
        if mode == .throwaway {
            // Commits still flush (a no-op without fsync): a logical replication stream sends
            // only flushed WAL, and would otherwise wait for the WAL writer, 200 ms at a time.
            settings += "\nfsync = off\nfull_page_writes = off\n"
        }
        let path = dataDirectory + "/local_server.conf"
        try (settings + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        try ShellCommand.handOver(path)
    }

    /// A persistent server already running in this directory, with the port it runs on.
    private func runningInstance() async throws -> LocalServer? {
        guard processID != nil,
              let contents = try? String(contentsOfFile: dataDirectory + "/postmaster.pid", encoding: .utf8)
        else { return nil }
        // postmaster.pid: pid, data directory, start time, port, socket directory, listen address…
        let lines = contents.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count > 5, let port = Int(lines[3]) else { return nil }
        let socket = lines[4].isEmpty ? nil : String(lines[4])
        return LocalServer(mode: mode, directory: directory, port: port, listensOnTCP: !lines[5].isEmpty,
                           tcpAddress: lines[5].isEmpty ? "127.0.0.1" : String(lines[5]), socketDirectory: socket)
    }

    /// Stops the server and deletes its directory once this process is gone, however it ends:
    /// the watchdog blocks reading a pipe that only this process can write to, and the kernel
    /// closes that pipe when the process exits, crashes or is killed.
    private func startWatchdog() throws {
        let script = """
            cat >/dev/null
            pid=$(head -n 1 "$1/data/postmaster.pid" 2>/dev/null)
            [ -n "$pid" ] && kill -QUIT "$pid" 2>/dev/null
            i=0; while [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
            rm -rf "$1"
            """
        let pipe = try ShellCommand.spawnDetached(script: script, arguments: [directory])
        watchdogPipe.withLock { $0 = pipe }
    }

    /// Lets the watchdog finish (after ``stop()`` there is nothing left for it to do).
    private func releaseWatchdog() {
        watchdogPipe.withLock { pipe in
            if let open = pipe { close(open) }
            pipe = nil
        }
    }

    /// The log's line that says why the server stopped or would not start, if there is one.
    private func logCause() -> String? {
        guard let log = try? String(contentsOfFile: logFile, encoding: .utf8) else { return nil }
        let recent = log.split(separator: "\n").suffix(20).joined(separator: "\n")
        return recent.isEmpty ? nil : ShellCommand.cause(in: recent)
    }

    /// `value` as one element of a list setting in `postgresql.conf`: double-quoted (commas and
    /// spaces stay inside), single quotes doubled for the setting's own quotes.
    static func configurationList(_ value: String) -> String {
        "\"" + value.replacingOccurrences(of: "\"", with: "\"\"").replacingOccurrences(of: "'", with: "''") + "\""
    }
}
