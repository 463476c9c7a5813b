import Foundation

/// Processes that spin on the CPU: load for tests of races that only show when the server's
/// processes wait for a CPU. Paused (SIGSTOP) unless running, so that a test loads the machine
/// only while the race it looks for can happen — the rest of the suite shares the machine.
final class CPUBurners: Sendable {
    private let processes: [ChildProcess]

    /// Starts `count` spinning shells (by default two per core), paused.
    init(count: Int = 2 * ProcessInfo.processInfo.activeProcessorCount) throws {
        processes = try (0..<count).map { _ in
            let process = try ChildProcess("/bin/sh", ["-c", "while :; do :; done"], environment: [:])
            kill(process.pid, SIGSTOP)
            return process
        }
    }

    var count: Int { processes.count }

    /// Runs `body` with the shells spinning.
    func spinning<T>(_ body: () async throws -> T) async rethrows -> T {
        for process in processes { kill(process.pid, SIGCONT) }
        defer { for process in processes { kill(process.pid, SIGSTOP) } }
        return try await body()
    }

    /// Kills and reaps the shells.
    func stop() {
        for process in processes {
            kill(process.pid, SIGKILL)
            _ = process.wait()
        }
    }
}
