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
        let shown = found.properties.generalCategory == .control ? "a control character" : "\"\(found)\""
        throw LocalServerError("the server's directory \(TerminalText.name(path)) holds \(shown), which pg_ctl would hand to the shell: choose a directory without \", $, ` or \\")
    }

    /// The system's reason behind a Foundation file error, in words.
    static func reason(_ error: any Error) -> String {
        let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
        if let code = underlying?.code, underlying?.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(code))) }
        return (error as NSError).localizedFailureReason ?? (error as NSError).localizedDescription
    }

    func initializeCluster(_ binaries: ServerBinaries) async throws {
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
        let path = dataDirectory + "/local_server.conf"
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

    /// Stops the server and deletes its directory once this process is gone, however it ends:
    /// the watchdog blocks reading a pipe that only this process can write to, and the kernel
    /// closes that pipe when the process exits, crashes or is killed.
    func startWatchdog() throws {
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
    func releaseWatchdog() {
        watchdogPipe.withLock { pipe in
            if let open = pipe { close(open) }
            pipe = nil
        }
    }

    /// The log's line that says why the server stopped or would not start, if there is one.
    func logCause() -> String? {
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
