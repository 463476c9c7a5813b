import Foundation

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
                return  // a closed pipe: nothing more can be said there
            }
        }
    }
}
