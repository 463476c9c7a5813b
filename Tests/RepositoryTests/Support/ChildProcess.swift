import Foundation
@testable import Repository

/// A program run as a child process with `posix_spawn`, its output read through pipes.
///
/// Foundation's `Process.waitUntilExit()` can hang on Linux when the child starts daemons of
/// its own (the demo starts PostgreSQL), so the tests that run executables use this instead.
final class ChildProcess: Sendable {
    private static let spawning = Lock()
    let pid: pid_t
    /// Read ends of the child's standard output and standard error.
    private let output: Int32
    private let errors: Int32
    /// The exit status once the child is reaped. After that its pid may belong to another
    /// process (pids wrap around at 32768 here): asking waitpid again would say nothing of this
    /// child, and a `kill` of the pid could hit a stranger.
    private let reaped = Locked<Int32?>(nil)

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later; its header shows it
    /// only under `_GNU_SOURCE`), nil where there is none.
    private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? =
        dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map {
            unsafeBitCast($0, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
        }

    init(_ executable: String, _ arguments: [String], environment: [String: String]) throws {
        var outputPipe: [Int32] = [-1, -1], errorPipe: [Int32] = [-1, -1]
        // Close-on-exec: a child spawned at the same moment on another thread must not inherit
        // these ends — a server it starts would hold them, and EOF would never come.
        // (The lock keeps another test's spawn from slipping in between pipe() and fcntl().)
        guard Self.spawning.withLock({ () -> Bool in
            guard pipe(&outputPipe) == 0, pipe(&errorPipe) == 0 else { return false }
            for fd in outputPipe + errorPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            return true
        }) else { throw TestSetupError("pipe failed") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, outputPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errorPipe[1], 2)
        // Nothing else of this test process either: another test's socket not marked
        // close-on-exec, held by a child that lives on, would never be seen closed.
        _ = Self.addCloseFrom?(&actions, 3)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = Self.withSanitizerSuppressions(environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var child: pid_t = 0
        let status = Self.spawning.withLock { posix_spawn(&child, executable, &actions, nil, argv, envp) }
        close(outputPipe[1])
        close(errorPipe[1])
        guard status == 0 else {
            close(outputPipe[0])
            close(errorPipe[0])
            throw TestSetupError("could not start \(executable): \(String(cString: strerror(status)))")
        }
        pid = child
        output = outputPipe[0]
        errors = errorPipe[0]
    }

    /// `environment` with ThreadSanitizer told of the suppressions the test bundle has too (see
    /// `Tests/SanitizerSettings`): a child built with `--sanitize=thread` reads them; others
    /// ignore the variable.
    static func withSanitizerSuppressions(_ environment: [String: String]) -> [String: String] {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("SanitizerSettings/tsan-suppressions.txt").path
        var environment = environment
        let options = environment["TSAN_OPTIONS"].map { $0 + " " } ?? ""
        environment["TSAN_OPTIONS"] = options + "suppressions=\(file)"
        return environment
    }

    deinit {
        close(output)
        close(errors)
    }

    /// What a child wrote and how it ended.
    struct Completion: Sendable {
        var status: Int32
        var output: Data
        var errors: Data
        /// Standard output, then standard error, as text.
        var text: String { String(decoding: output + errors, as: UTF8.self) }
    }

    /// Reads standard output and standard error to their ends and waits for the exit — each on
    /// a thread of its own. A test never waits for a child on the cooperative pool: it has a
    /// thread per core, two here, and two tests blocked there stall every other test and the
    /// deadlines those tests keep.
    func completion() async -> Completion {
        async let errors = Self.offPool { Self.readAll(self.errors) }
        let output = await Self.offPool { Self.readAll(self.output) }
        let status = await exit()
        return Completion(status: status, output: output, errors: await errors)
    }

    /// Waits for the child to exit, on a thread of its own; its exit status.
    func exit() async -> Int32 {
        await Self.offPool { self.wait() }
    }

    /// Runs the blocking `body` on a thread of its own and resumes with its result.
    static func offPool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: body()) }
        }
    }

    /// Everything the child writes to standard error, until it closes it. Blocks: only for a
    /// child that has exited (see `completion()`).
    func readErrors() -> Data { Self.readAll(errors) }

    /// Calls `line` with each line of standard output as it arrives, on a thread of its own.
    func readOutputLines(_ line: @escaping @Sendable (String) -> Void) {
        // A copy of its own: this object may be gone (its `output` closed, and the number
        // perhaps taken by another thread's socket) while the thread still reads.
        let fd = fcntl(output, F_DUPFD_CLOEXEC, 0)
        guard fd >= 0 else { return }
        Thread.detachNewThread {
            defer { close(fd) }
            var pending = Data()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while case let count = read(fd, &buffer, buffer.count), count > 0 {
                pending.append(contentsOf: buffer[0..<count])
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    line(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                    pending.removeSubrange(pending.startIndex...newline)
                }
            }
        }
    }

    /// Waits for the child to exit and returns its exit status (128 + n if killed by signal n).
    /// Blocks: only for a child just killed, or off the cooperative pool (see `exit()`).
    func wait() -> Int32 {
        if let status = reaped.withLock({ $0 }) { return status }
        var status: Int32 = 0
        var result: pid_t
        repeat { result = waitpid(pid, &status, 0) } while result == -1 && errno == EINTR
        return result == pid ? reap(status) : reaped.withLock { $0 } ?? -1
    }

    /// The exit status if the child has exited, else nil.
    func exitStatusIfExited() -> Int32? {
        if let status = reaped.withLock({ $0 }) { return status }
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == pid ? reap(status) : reaped.withLock { $0 }
    }

    private func reap(_ status: Int32) -> Int32 {
        let exit = Self.exitStatus(status)
        reaped.withLock { $0 = exit }
        return exit
    }

    private static func exitStatus(_ status: Int32) -> Int32 {
        status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    private static func readAll(_ fd: Int32) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count > 0 { data.append(contentsOf: buffer[0..<count]) } else if count == 0 || errno != EINTR { return data }
        }
    }
}
