import Foundation
import Synchronization

/// Output written as it happens: each call is one `write` of whole lines, unbuffered, so a log
/// that standard output and standard error are redirected to (`migrate up > log 2>&1`) gets
/// every progress line complete and in order, and an error never lands inside one.
enum StandardOutput {
    /// Writes `text` and a newline to `descriptor` (standard output by default).
    static func line(_ text: String, to descriptor: Int32 = STDOUT_FILENO) {
        let bytes = Array((text + "\n").utf8)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                written += count
            } else if count < 0, errno == EINTR {
                continue
            } else {
                // A closed pipe (`migrate status | head -1`): the reader has what it wanted. Any
                // other failure (a full disk) loses output, and fails the command at its end.
                if count < 0, errno != EPIPE { failure.store(errno, ordering: .relaxed) }
                return
            }
        }
    }

    /// The `errno` of the last write that lost output (not a closed pipe); 0 if none did.
    private static let failure = Atomic<Int32>(0)

    /// Why output was lost — ``line(_:to:)`` failed, other than on a closed pipe — or nil.
    static var lostOutput: String? {
        let code = failure.load(ordering: .relaxed)
        return code == 0 ? nil : String(cString: strerror(code))
    }
}
