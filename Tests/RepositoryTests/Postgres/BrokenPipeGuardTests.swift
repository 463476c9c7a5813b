import Foundation
@testable import Repository
import Testing

@Suite("A write to a closed socket does not kill the process")
struct BrokenPipeGuardTests {
    /// Without the guard this test process would die of SIGPIPE (status 141) at the write.
    @Test("a write to a pipe nobody reads fails with EPIPE, and no SIGPIPE is left pending")
    func writeToClosedPipe() throws {
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        close(ends[0])
        defer { close(ends[1]) }
        let (written, error) = BrokenPipeGuard.run { () -> (Int, Int32) in
            let byte: UInt8 = 1
            let written = withUnsafePointer(to: byte) { write(ends[1], $0, 1) }
            return (written, errno)
        }
        #expect(written == -1)
        #expect(error == EPIPE)
        var pending = sigset_t()
        sigpending(&pending)
        #expect(sigismember(&pending, SIGPIPE) == 0)
    }

    @Test("the thread's signal mask is as it was before")
    func maskRestored() {
        var before = sigset_t(), after = sigset_t()
        pthread_sigmask(SIG_SETMASK, nil, &before)
        BrokenPipeGuard.run {}
        pthread_sigmask(SIG_SETMASK, nil, &after)
        #expect(sigismember(&before, SIGPIPE) == sigismember(&after, SIGPIPE))
    }
}
