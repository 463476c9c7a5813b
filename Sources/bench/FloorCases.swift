import Foundation
import Synchronization

extension Cases {
    /// What one hop costs on this machine: a task awaiting work that another thread finishes
    /// and resumes it from — the least any async API over blocking libpq pays per statement on
    /// top of the statement itself. Against a `Task.yield()`, the cheapest suspension.
    func hopFloor() async -> BenchResult {
        let thread = ResumingThread()
        let hop = await measure(iterations * 5) { await thread.roundTrip() }
        let yields = await measure(iterations * 5) { await Task.yield() }
        return BenchResult(name: "floor: await resumed by a thread", unit: "us", library: hop.p50, libraryP99: hop.p99,
                           baseline: yields.p50, baselineP99: yields.p99, ratio: hop.p50 / yields.p50, target: "(informative)",
                           met: true, note: "a task hands work to another thread and is resumed from it (as a statement is by the poller); against Task.yield()")
    }
}

/// A thread that resumes whoever hands it a continuation: one hop there, one hop back.
private final class ResumingThread: Sendable {
    private let wakeUp = DispatchSemaphore(value: 0)
    private let handedOver = Mutex<CheckedContinuation<Void, Never>?>(nil)

    init() {
        let thread = Thread { [self] in
            while true {
                wakeUp.wait()
                handedOver.withLock { $0.take() }?.resume()
            }
        }
        thread.start()
    }

    func roundTrip() async {
        await withCheckedContinuation { continuation in
            handedOver.withLock { $0 = continuation }
            wakeUp.signal()
        }
    }
}
