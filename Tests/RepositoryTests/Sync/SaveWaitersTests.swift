import PropertyBased
@testable import Repository
import Testing

/// ``SaveWaiters`` without a database: whatever order parking, waking and cancelling come in,
/// a `save()` call is resumed exactly once, with what settled it first.
@Suite("Save waiters")
struct SaveWaitersTests {
    /// What resumed a call: returned, threw a failure of the sync state, or was cancelled.
    enum Resumed: Equatable {
        case returned, failed, cancelled
    }

    static func resumed(_ failure: (any Error)?) -> Resumed {
        switch failure {
        case nil: .returned
        case is CancellationError: .cancelled
        default: .failed
        }
    }

    static let failure = LiveRecordError.writeFailed(table: "t", key: "1", PostgresError(.server, "refused"))

    @Test("woken before it waits, a call returns (or throws) as soon as it parks; parked, it is resumed by the wake")
    func wakeBeforeAndAfterParking() {
        var waiters = SaveWaiters<Int>()
        let (early, late, failing) = (waiters.enrol(), waiters.enrol(), waiters.enrol())
        #expect(waiters.wake([(early, nil), (failing, Self.failure)]).isEmpty)
        #expect(waiters.park(early, early).map(Self.resumed) == .returned)
        #expect(waiters.park(failing, failing).map(Self.resumed) == .failed)
        #expect(waiters.park(late, late) == nil)
        let woken = waiters.wake([(late, nil)])
        #expect(woken.map(\.waiter) == [late] && woken[0].failure == nil)
        #expect(waiters.count == 0)
    }

    @Test("cancelled before it waits, a call throws CancellationError as it parks; parked, cancelling hands its waiter back once")
    func cancelling() {
        var waiters = SaveWaiters<Int>()
        let (before, after) = (waiters.enrol(), waiters.enrol())
        #expect(waiters.cancel(before) == (true, nil))
        #expect(waiters.park(before, before).map(Self.resumed) == .cancelled)
        #expect(waiters.park(after, after) == nil)
        #expect(waiters.cancel(after) == (true, after))
        #expect(waiters.cancel(after) == (false, nil))
        #expect(waiters.wake([(after, nil)]).isEmpty)
        #expect(waiters.count == 0)
    }

    @Test("random orders of parking, waking and cancelling: every call is resumed exactly once, as the order decides", .shrinking)
    func randomOrders() async {
        // Each step: a call (0–5), and what happens to it: 0 parks, 1 wakes it, 2 wakes it with a failure, 3 cancels.
        await propertyCheck(count: 1000, input: zip(Gen.int(in: 0...5), Gen.int(in: 0...3)).array(of: 0...40)) { steps in
            var waiters = SaveWaiters<Int>()
            let tickets = (0..<6).map { _ in waiters.enrol() }
            var resumed: [Int: [Resumed]] = [:]
            // What decides each call: before it parks, a cancel (even after a wake: the task
            // throws CancellationError), else the first wake; once parked, the first event.
            var cancelledEarly: Set<Int> = [], wokenEarly: [Int: Resumed] = [:], decided: [Int: Resumed] = [:]
            var parked: Set<Int> = []
            func apply(_ call: Int, _ action: Int) {
                let ticket = tickets[call]
                let event: Resumed = action == 1 ? .returned : action == 2 ? .failed : .cancelled
                if action != 0 && !parked.contains(call) {
                    if action == 3 { cancelledEarly.insert(call) } else if wokenEarly[call] == nil { wokenEarly[call] = event }
                } else if action != 0, decided[call] == nil {
                    decided[call] = event
                }
                switch action {
                case 0:
                    guard !parked.contains(call) else { return }  // a call parks once
                    parked.insert(call)
                    if cancelledEarly.contains(call) { decided[call] = .cancelled } else if let early = wokenEarly[call] { decided[call] = early }
                    if let now = waiters.park(ticket, call) { resumed[call, default: []].append(Self.resumed(now)) }
                case 1, 2:
                    for (waiter, failure) in waiters.wake([(ticket, action == 1 ? nil : Self.failure)]) {
                        resumed[waiter, default: []].append(Self.resumed(failure))
                    }
                default:
                    let (_, waiter) = waiters.cancel(ticket)
                    if let waiter { resumed[waiter, default: []].append(.cancelled) }
                }
            }
            for (call, action) in steps { apply(call, action) }
            // Every call parks, then is cancelled: whatever has not settled it yet does now.
            for call in 0..<6 {
                apply(call, 0)
                apply(call, 3)
            }
            for call in 0..<6 {
                #expect(resumed[call] == decided[call].map { [$0] }, "call \(call): \(resumed[call] ?? []), expected \(String(describing: decided[call]))")
            }
            #expect(waiters.count == 0)
        }
    }
}
