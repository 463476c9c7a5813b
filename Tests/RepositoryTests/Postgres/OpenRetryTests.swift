@testable import Repository
import Testing

/// When a task whose connection the server refused tries again — no database needed.
@Suite("Retrying a refused connection")
struct OpenRetryTests {
    let refused = PostgresError(.connectionFailed, "FATAL:  too many connections for role \"app\"")

    @Test("a second whatever else is open; then, only while the pool holds others, until the deadline")
    func waits() {
        let start = ContinuousClock.now
        var retry = OpenRetry(refused, at: start)
        for _ in 0..<5 {
            for othersOpen in [false, true] {
                #expect(retry.waits(othersOpen: othersOpen, deadline: .seconds(10), now: start + .milliseconds(999)))
            }
            retry.failed(refused)
        }
        #expect(!retry.waits(othersOpen: false, deadline: .seconds(10), now: start + OpenRetry.quickWindow))
        #expect(retry.waits(othersOpen: true, deadline: .seconds(10), now: start + .seconds(9)))
        #expect(!retry.waits(othersOpen: true, deadline: .seconds(10), now: start + .seconds(10)))
    }

    @Test("while the pool hands connections back, waiting goes on past the deadline; once it stops, it ends a deadline later")
    func progress() {
        let start = ContinuousClock.now
        var retry = OpenRetry(refused, handedBack: 5, at: start)
        retry.saw(handedBack: 9, now: start + .seconds(8))
        #expect(retry.waits(othersOpen: true, deadline: .seconds(10), now: start + .seconds(17)))
        retry.saw(handedBack: 9, now: start + .seconds(17))  // no progress since
        #expect(!retry.waits(othersOpen: true, deadline: .seconds(10), now: start + .seconds(18)))
        #expect(!retry.waits(othersOpen: false, deadline: .seconds(10), now: start + .seconds(2)))
    }

    @Test("back-off: 25 ms doubling to 1 s, spread by half either way")
    func backOff() {
        var retry = OpenRetry(refused)
        for base in [25.0, 50, 100, 200, 400, 800, 1000, 1000, 1000] {
            let milliseconds = (0..<200).map { _ in retry.backOff / .milliseconds(1) }
            #expect(milliseconds.allSatisfy { $0 >= base * 0.5 && $0 <= base * 1.5 }, "\(base): \(milliseconds.min()!)–\(milliseconds.max()!)")
            #expect(milliseconds.max()! - milliseconds.min()! > base * 0.5, "not spread")
            retry.failed(refused)
        }
    }
}
