import Foundation

/// The steps of starting a server: its directory, the cluster, its settings, a server already
/// running there, and the watchdog that stops it once this process is gone.
extension LocalServer {
    /// The server's directory, and whether this call created it.
    static func prepareDirectory(for mode: Mode) throws -> (path: String, created: Bool) {
        let path: String
        var created = true
        switch mode {
        case .throwaway:
            let template = FileManager.default.temporaryDirectory.path + "/live-postgres-XXXXXX"
            try refuseShellSpecialCharacters(in: template)
            var bytes = Array(template.utf8CString)
            guard let made = mkdtemp(&bytes) else {
                throw LocalServerError("could not create a temporary directory: \(String(cString: strerror(errno)))")
            }
            path = String(cString: made)
        case .persistent(let directory):
            path = URL(fileURLWithPath: directory).standardizedFileURL.path
            try refuseShellSpecialCharacters(in: path)
            created = !FileManager.default.fileExists(atPath: path)
            if !created { try refuseForeignEntries(in: path) }
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

    /// Refuses a directory whose path the shell would read as more than a name: `pg_ctl start`
    /// runs the server through `sh -c`, with the data directory and the log file inside double
    /// quotes, where `"`, `$`, `` ` `` and `\` still act — a directory named `$(…)` would run
    /// a command as the server's account. Control characters are refused too.
    static func refuseShellSpecialCharacters(in path: String) throws {
        guard let found = path.unicodeScalars.first(where: { "\"$`\\".unicodeScalars.contains($0) || $0.properties.generalCategory == .control }) else { return }
        let names: [Unicode.Scalar: String] = ["\"": "a double quote", "$": "a dollar sign", "`": "a backtick", "\\": "a backslash"]
        let shown = names[found] ?? "a control character"
        throw LocalServerError("the server's directory \(TerminalText.escaped(path, limit: 400)) holds \(shown), which pg_ctl would hand to the shell: choose a directory without \", $, ` or \\")
    }

    /// The system's reason behind a Foundation file error, in words.
    static func reason(_ error: any Error) -> String {
        let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
        if let code = underlying?.code, underlying?.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(code))) }
        return (error as NSError).localizedFailureReason ?? (error as NSError).localizedDescription
    }

    /// Makes the cluster: `initdb` into a directory of its own, renamed to `data` once it is
    /// complete, so that a start cut short — this process killed while `initdb` ran, which goes
    /// on without it — never leaves a `data` that looks made. Clusters such starts left half
    /// made are removed first.
    func initializeCluster(_ binaries: ServerBinaries) async throws {
        let fileManager = FileManager.default
        for entry in (try? fileManager.contentsOfDirectory(atPath: directory)) ?? [] where entry.hasPrefix(Self.stagingPrefix) {
            try? fileManager.removeItem(atPath: directory + "/" + entry)
        }
        // A `data` with no PG_VERSION: one made by an earlier version of this code, cut short.
        if Self.isCluster(dataDirectory) { try? fileManager.removeItem(atPath: dataDirectory) }
        let staging = directory + "/" + Self.stagingPrefix + "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        var arguments = ["-D", staging, "-U", superuser, "-E", "UTF8", "--locale=C",
                         "--auth-local=trust", "--auth-host=scram-sha-256"]
        if mode == .throwaway { arguments.append("--no-sync") }
        do {
            _ = try await ShellCommand.run(binaries.initdb, arguments)
        } catch let error as LocalServerError {
            try? fileManager.removeItem(atPath: staging)
            throw LocalServerError("initdb could not create the cluster in \(dataDirectory): \(ShellCommand.cause(in: error.output ?? error.message))")
        }
        try includeSettings(in: staging)
        // Clients on networks this machine is on (a TCP address other than 127.0.0.1), with a password.
        try append("\nhost all all samenet scram-sha-256\n", to: staging + "/pg_hba.conf")
        guard rename(staging, dataDirectory) == 0 else {
            throw LocalServerError("could not move the new cluster into \(dataDirectory): \(String(cString: strerror(errno)))")
        }
    }

    /// The line in `postgresql.conf` that reads the settings ``writeSettings()`` writes; added
    /// when missing (a cluster made before it was added there).
    func includeSettings(in cluster: String? = nil) throws {
        let path = (cluster ?? dataDirectory) + "/postgresql.conf"
        let line = "include_if_exists = '\(Self.settingsFile)'"
        if let contents = try? String(contentsOfFile: path, encoding: .utf8), contents.contains(line) { return }
        try append("\n\(line)\n", to: path)
    }

    func append(_ text: String, to path: String) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        handle.seekToEndOfFile()
        handle.write(Data(text.utf8))
        try handle.close()
    }

    /// Settings rewritten at every start: where to listen, and speed over durability for tests.
    func writeSettings() throws {
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
        let path = dataDirectory + "/" + Self.settingsFile
        try (settings + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        try ShellCommand.handOver(path)
    }

    /// A persistent server already running in this directory, with the port it runs on.
    func runningInstance() async throws -> LocalServer? {
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

    /// Stops the server in `directory` and deletes the directory once this process is gone,
    /// however it ends: the watchdog blocks reading a pipe that only this process can write to,
    /// and the kernel closes that pipe when the process exits, crashes or is killed. Returns
    /// the pipe's write end, to hold while the server should live.
    static func startWatchdog(for directory: String) throws -> Int32 {
        let script = """
            cat >/dev/null
            pid=$(head -n 1 "$1/data/postmaster.pid" 2>/dev/null)
            [ -n "$pid" ] && kill -QUIT "$pid" 2>/dev/null
            i=0; while [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
            rm -rf "$1"
            """
        return try ShellCommand.spawnDetached(script: script, arguments: [directory])
    }

    /// Lets the watchdog finish (after ``stop()`` there is nothing left for it to do).
    func releaseWatchdog() {
        watchdogPipe.withLock { pipe in
            if let open = pipe { close(open) }
            pipe = nil
        }
    }

    /// The line, among those the log gained past byte `offset`, that says why the server
    /// stopped or would not start, if there is one.
    func logCause(from offset: Int = 0) -> String? {
        guard let handle = FileHandle(forReadingAtPath: logFile) else { return nil }
        defer { try? handle.close() }
        try? handle.seek(toOffset: UInt64(offset))
        guard let data = try? handle.readToEnd() else { return nil }
        let recent = String(decoding: data, as: UTF8.self).split(separator: "\n").suffix(20).joined(separator: "\n")
        return recent.isEmpty ? nil : ShellCommand.cause(in: recent)
    }

    /// This running server, when it listens as `tcpPort` asks (see ``start(_:tcpPort:tcpAddress:)``).
    func listening(asAskedBy tcpPort: Int?) throws -> LocalServer {
        guard let tcpPort else { return self }
        if listensOnTCP && (tcpPort == 0 || tcpPort == port) { return self }
        let now = listensOnTCP ? "on TCP port \(port)" : "on its unix socket only"
        throw LocalServerError("the server already running in \(TerminalText.escaped(directory, limit: 400)) listens \(now), not on \(tcpPort == 0 ? "a TCP port" : "TCP port \(tcpPort)") as asked: stop it first (or ask for what it listens on)")
    }

    /// Removes a directory this start made. (Its start lock's file stays: another process may
    /// be waiting on it.)
    static func removeCreated(_ directory: String) {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// `value` as one element of a list setting in `postgresql.conf`: double-quoted (commas and
    /// spaces stay inside), single quotes doubled for the setting's own quotes.
    static func configurationList(_ value: String) -> String {
        "\"" + value.replacingOccurrences(of: "\"", with: "\"\"").replacingOccurrences(of: "'", with: "''") + "\""
    }
}
