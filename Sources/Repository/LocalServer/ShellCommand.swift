import Foundation
import Subprocess
#if canImport(System)
import System
#else
import SystemPackage
#endif

/// Runs programs for the local server with `posix_spawn`, off Swift's cooperative thread pool.
enum ShellCommand {
    /// The unprivileged account the server runs as when this process is root (initdb refuses root).
    static let serverAccount = "postgres"

    static var isRoot: Bool { geteuid() == 0 }

    /// Runs `program` (as ``serverAccount`` when root) with swift-subprocess, which waits without
    /// blocking Swift's cooperative pool, and returns its combined output; throws with the
    /// line stating the cause when it exits non-zero.
    static func run(_ program: String, _ arguments: [String], asServerAccount: Bool = true) async throws -> String {
        let name = URL(fileURLWithPath: program).lastPathComponent
        let (program, arguments) = asServerAccount && isRoot
            ? ("/usr/sbin/runuser", ["-u", serverAccount, "--", program] + arguments)
            : (program, arguments)
        let result: ExecutionRecord
        do {
            let run = try await Subprocess.run(.path(FilePath(program)), arguments: Arguments(arguments),
                                               output: .string(limit: 1 << 20), error: .combinedWithOutput)
            result = ExecutionRecord(status: run.terminationStatus, output: run.standardOutput)
        } catch {
            throw LocalServerError("could not run \(program): \(error)")
        }
        guard case .exited(0) = result.status else {
            throw LocalServerError("\(name) failed (\(result.status)): \(cause(in: result.output))", output: result.output)
        }
        return result.output
    }

    private struct ExecutionRecord {
        let status: TerminationStatus
        let output: String
    }

    /// Runs `program`, collects its output and waits for it; blocks the calling thread (for
    /// callers that are on a thread of their own, never on Swift's cooperative pool).
    static func runSync(_ program: String, _ arguments: [String], name: String? = nil) throws -> String {
        var fds: [Int32] = [-1, -1]
        // Only the dup2'd copies may reach the child: a daemon it starts (the postmaster)
        // would otherwise hold the write end open and the read below would never see EOF.
        guard makeCloseOnExecPipe(&fds) else { throw LocalServerError("could not create a pipe: \(String(cString: strerror(errno)))") }
        let pid = try spawn(program, arguments, output: fds[1], newSession: false)
        close(fds[1])
        var output = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(fds[0], &buffer, buffer.count)
            if count > 0 { output += buffer[0..<count]; continue }
            if count < 0, errno == EINTR { continue }
            break
        }
        close(fds[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        let text = String(decoding: output, as: UTF8.self)
        // WIFEXITED/WEXITSTATUS are macros Swift cannot import: exited normally when the low
        // 7 bits are 0, with the code in the next 8.
        let exitCode = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        guard exitCode == 0 else {
            throw LocalServerError("\(name ?? program) failed (exit \(exitCode)): \(cause(in: text))", output: text)
        }
        return text
    }

    /// The line of a program's output that states why it failed: the first that reads like an
    /// error (`error:`, `FATAL:`, `could not`, `Permission denied`…), else the last line.
    static func cause(in output: String) -> String {
        let lines = output.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let markers = ["error:", "fatal:", "panic:", "could not", "permission denied", "no such file", "invalid", "already in use", "cannot"]
        return lines.first { line in markers.contains { line.lowercased().contains($0) } } ?? lines.last ?? "no output"
    }

    /// Starts `/bin/sh -c script` in a session of its own, with no terminal and no output, so
    /// it outlives this process and ignores the terminal's Ctrl-C. Returns the write end of a
    /// pipe that is the script's standard input: it reads EOF when this process closes that
    /// end or dies, however it dies.
    static func spawnDetached(script: String, arguments: [String]) throws -> Int32 {
        var fds: [Int32] = [-1, -1]
        guard makeCloseOnExecPipe(&fds) else { throw LocalServerError("could not create a pipe: \(String(cString: strerror(errno)))") }
        let devNull = open("/dev/null", O_WRONLY)
        defer { close(devNull); close(fds[0]) }
        do {
            _ = try spawn("/bin/sh", ["-c", script, "sh"] + arguments, input: fds[0], output: devNull, newSession: true)
        } catch {
            close(fds[1])
            throw error
        }
        return fds[1]
    }

    /// Held from creating a pipe until its ends are close-on-exec, and around every spawn, so
    /// no program this library starts inherits another's pipe end (glibc hides `pipe2`).
    private static let spawnLock = Lock()

    /// A pipe whose ends the programs this library starts cannot inherit.
    private static func makeCloseOnExecPipe(_ fds: inout [Int32]) -> Bool {
        spawnLock.withLock {
            guard pipe(&fds) == 0 else { return false }
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            return true
        }
    }

    private static func spawn(_ program: String, _ arguments: [String], input: Int32? = nil, output: Int32, newSession: Bool) throws -> pid_t {
        #if os(Linux)
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        #else
        var actions: posix_spawn_file_actions_t?
        var attributes: posix_spawnattr_t?
        #endif
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        if let input {
            posix_spawn_file_actions_adddup2(&actions, input, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, output, 1)
        posix_spawn_file_actions_adddup2(&actions, output, 2)
        if newSession {
            #if os(Linux)
            let setSession: Int16 = 0x80  // POSIX_SPAWN_SETSID, hidden behind _GNU_SOURCE in glibc's header
            #else
            let setSession = Int16(POSIX_SPAWN_SETSID)
            #endif
            posix_spawnattr_setflags(&attributes, setSession)
        }
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let result = spawnLock.withLock { posix_spawn(&pid, program, &actions, &attributes, argv, environ) }
        guard result == 0 else {
            throw LocalServerError("could not run \(program): \(String(cString: strerror(result)))")
        }
        return pid
    }

    /// Makes `path` owned by the server account when this process is root.
    static func handOver(_ path: String) throws {
        guard isRoot else { return }
        guard let account = getpwnam(serverAccount) else {
            throw LocalServerError("running as root, but there is no '\(serverAccount)' account to run PostgreSQL as (initdb refuses root); create it or run as another user")
        }
        guard chown(path, account.pointee.pw_uid, account.pointee.pw_gid) == 0 else {
            throw LocalServerError("could not hand \(path) to the \(serverAccount) account: \(String(cString: strerror(errno)))")
        }
    }
}
