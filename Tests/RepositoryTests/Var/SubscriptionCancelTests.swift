import Dispatch
import Foundation
@testable import Repository
import Testing

/// `Subscription.cancel()` holds on every path: once it returns, the handler is not running
/// on another thread and is never called again.
@Suite("Subscription cancellation")
struct SubscriptionCancelTests {
    @Test("observe(on:): updates still queued when cancel() returns are dropped")
    func queuedUpdatesAreDropped() async {
        let value = Var(0)
        let queue = DispatchQueue(label: "observer")
        let seen = Recorder<Int>()
        let subscription = value.observe(on: queue) { seen.append($0.new) }
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }              // the queue is busy…
        for index in 1...10 { value.value = index } // …so these handler calls wait in it
        subscription.cancel()
        gate.signal()
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
        #expect(seen.all.isEmpty)
    }

    @Test("observeOnMainActor: updates still queued when cancel() returns are dropped")
    func mainActorQueuedUpdatesAreDropped() async {
        let value = Var(0)
        let seen = Recorder<Int>()
        let subscription = value.observeOnMainActor { seen.append($0.new) }
        let (busy, release) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        DispatchQueue.main.async { busy.signal(); release.wait() }  // the main queue is busy…
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            busy.wait()
            for index in 1...10 { value.value = index }  // …so these handler calls wait in it
            subscription.cancel()
            release.signal()
            done.signal()
        }
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { done.wait(); continuation.resume() }
        }
        await MainActor.run {}
        await withCheckedContinuation { continuation in DispatchQueue.main.async { continuation.resume() } }
        #expect(seen.all.isEmpty)
    }

    @Test("cancel() from another thread waits for a handler that is running, and none starts after")
    func cancelWaitsForRunningHandler() async throws {
        let value = Var(0)
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let calls = Recorder<Int>()
        let subscription = value.observe { update in
            calls.append(update.new)
            if update.new == 1 {
                entered.signal()
                release.wait()
            }
        }
        let writer = Thread { value.value = 1 }
        writer.start()
        entered.wait()                                  // the handler is running on the writer's thread
        let cancelled = Locked(false)
        let canceller = Thread {
            subscription.cancel()
            cancelled.withLock { $0 = true }
        }
        canceller.start()
        // cancel() cannot return while the handler runs.
        for _ in 0..<1000 where !cancelled.withLock({ $0 }) { await Task.yield() }
        #expect(!cancelled.withLock { $0 })
        release.signal()
        #expect(try await eventually(timeout: .seconds(10)) { cancelled.withLock { $0 } })
        value.value = 2
        #expect(calls.all == [1])
    }

    @Test("a handler may cancel its own subscription without waiting for itself")
    func handlerCancelsItself() {
        let value = Var(0)
        let calls = Recorder<Int>()
        let holder = Locked<Subscription?>(nil)
        holder.withLock { $0 = value.observe { update in
            calls.append(update.new)
            holder.withLock { $0 }?.cancel()
        } }
        value.value = 1
        value.value = 2
        #expect(calls.all == [1])
    }
}

