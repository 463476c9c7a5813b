import Foundation

/// What a local server keeps in its directory, and deleting it: only what the server made, so
/// that a directory that held other files is never taken over, nor emptied.
extension LocalServer {
    /// Whether `name`, an entry of the directory `path`, is one a local server makes: its
    /// cluster (`data`, and a cluster being made), its log, and its socket and the socket's lock.
    /// A `data` is a cluster only when it is one (or a start of one cut short): a folder of the
    /// user's named `data` is not. Deleting, `server.log` is the server's only beside a cluster
    /// (the user may have one of their own); starting, one left alone is taken as the server's.
    static func isOwnEntry(_ name: String, in path: String, deleting: Bool = false) -> Bool {
        switch name {
        case "data": isCluster(path + "/data")
        case "server.log": !deleting || isCluster(path + "/data") || hasStaging(path)
        default: name.hasPrefix(stagingPrefix) || name.hasPrefix(".s.PGSQL.")
        }
    }

    /// Whether `path` is a cluster: it holds `PG_VERSION` (whatever else: a `.DS_Store`, a
    /// `standby.signal`), or — a start of an earlier version cut short — nothing but what
    /// `initdb`, the server and these settings make.
    static func isCluster(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue,
              let entries = try? FileManager.default.contentsOfDirectory(atPath: path) else { return false }
        if entries.contains("PG_VERSION") { return true }
        return entries.allSatisfy { entry in
            ["pg_", "postgresql", "postmaster"].contains { entry.hasPrefix($0) }
                || ["base", "global", "current_logfiles", "log", settingsFile].contains(entry)
        }
    }

    private static func hasStaging(_ path: String) -> Bool {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).contains { $0.hasPrefix(stagingPrefix) }
    }

    /// The file in the cluster that holds the settings this library gives the server.
    static let settingsFile = "local_server.conf"

    /// The start of the name of a cluster `initdb` is making, renamed to `data` once complete.
    static let stagingPrefix = "data.initializing-"

    /// Refuses an existing directory holding files no local server made: a server there would
    /// take it over (as root, its owner becomes the server's account), and deleting the server
    /// would delete them.
    static func refuseForeignEntries(in path: String) throws {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        let foreign = entries.filter { !isOwnEntry($0, in: path) }.sorted()
        guard !foreign.isEmpty else { return }
        let shown = foreign.prefix(3).map { TerminalText.escaped($0, limit: 80) }.joined(separator: ", ") + (foreign.count > 3 ? ", …" : "")
        throw LocalServerError("\(TerminalText.escaped(path, limit: 400)) already holds files a local server did not make (\(shown)): give the server a directory of its own, empty or new")
    }

    /// Stops the persistent server running in `directory`, if one is, and deletes what local
    /// servers made there — the cluster, the log, the socket —, then the directory itself when
    /// nothing else is left in it. Files a local server did not make stay, with the directory.
    /// Waits for a server starting there meanwhile (as ``start(_:tcpPort:tcpAddress:)`` does).
    /// - Returns: Whether a server was stopped or anything it made was there to delete.
    /// - Throws: ``LocalServerError`` saying what could not be deleted, and why.
    @discardableResult
    public static func delete(directory: String) async throws -> Bool {
        let path = URL(fileURLWithPath: directory).standardizedFileURL.path
        guard FileManager.default.fileExists(atPath: path) else { return false }
        // Nothing a local server makes is there (a server's own `data` directory, named by
        // mistake): no lock either, whose file beside it would be a foreign file where it is.
        // (Left as it is: a start holding the lock may have just made it, empty.)
        guard ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).contains(where: { isOwnEntry($0, in: path, deleting: true) }) else { return false }
        let lock = try await StartLock.acquire(for: path)
        defer { withExtendedLifetime(lock) {} }
        var deleted = false
        if let server = try await running(in: path) {
            try await server.stop()
            server.removeSocketDirectory()
            deleted = true
        }
        let entries: [String]
        do {
            entries = try FileManager.default.contentsOfDirectory(atPath: path)
        } catch {
            throw LocalServerError("could not read the server's directory \(TerminalText.escaped(path, limit: 400)): \(reason(error))")
        }
        // Judged before any is deleted: the log is the server's beside its cluster.
        for entry in entries.filter({ isOwnEntry($0, in: path, deleting: true) }) {
            do {
                try FileManager.default.removeItem(atPath: path + "/" + entry)
            } catch {
                throw LocalServerError("could not delete \(TerminalText.escaped(path + "/" + entry, limit: 400)): \(reason(error))")
            }
            deleted = true
        }
        // Left where other files are: `rmdir` removes only an empty directory.
        rmdir(path)
        return deleted
    }

    /// Removes the private socket directory under the temporary directory, if this server used
    /// one (see ``socketDirectory``) and nothing is left in it.
    func removeSocketDirectory() {
        guard socketDirectory != directory else { return }
        rmdir(socketDirectory)
    }
}
