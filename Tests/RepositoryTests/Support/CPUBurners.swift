import Foundation

/// Processes that spin on the CPU until stopped: load for tests of races that only show when
/// the server's processes wait for a CPU.
final class CPUBurners: Sendable {
    private let processes: [ChildProcess]

    /// Starts `count` spinning shells (by default two per core).
    init(count: Int = 2 * ProcessInfo.processInfo.activeProcessorCount) throws {
        processes = try (0..<count).map { _ in
            try ChildProcess("/bin/sh", ["-c", "while :; do :; done"], environment: [:])
        }
    }

    var count: Int { processes.count }

    /// Kills and reaps the spinning shells.
    func stop() {
        for process in processes {
            kill(process.pid, SIGKILL)
            _ = process.wait()
        }
    }
}
