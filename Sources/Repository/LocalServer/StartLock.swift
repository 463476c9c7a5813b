import Foundation

/// Keeps two processes from starting the same persistent server at once (both would run
/// `initdb`, or both `pg_ctl start`): an exclusive `flock` on a file beside the directory,
/// held from the check for a running server until it runs.
final class StartLock {
    private let descriptor: Int32

    /// Waits (polling, off any blocking call) until the lock for `directory` is ours.
    static func acquire(for directory: String, timeout: Duration = .seconds(120)) async throws -> StartLock {
        let path = (directory as NSString).standardizingPath + ".lock"
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let descriptor = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw LocalServerError("could not open \(path): \(String(cString: strerror(errno)))") }
        let deadline = ContinuousClock.now + timeout
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, ContinuousClock.now < deadline else {
                close(descriptor)
                throw LocalServerError("another process has been starting the server in \(directory) for too long (\(path) is locked)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return StartLock(descriptor: descriptor)
    }

    private init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }  // closing releases the lock
}
