import Foundation
@testable import Repository
import Testing

/// The repository's view of its change feed on its own, with no database: every sequence of up
/// to five events checked against a model of what each promises, and the reads waiting at the gate.
@Suite("Feed state: the gate, failed re-reads and their repair, the refresh worker")
struct FeedStateTests {
    enum Event: CaseIterable {
        case listens, resumed, reconnected, givesUp, failed, failedForGood, repairStarts, markFirst, markBoth, nextBatch
    }

    /// What the events promise, kept as plainly as they are stated.
    struct Model {
        enum Gate { case closed, listening, withoutFeed }
        var gate = Gate.closed
        var failedSinceResume = false
        var repairScheduled = false
        var workerRuns = false
        var marked: Set<ObjectIdentifier> = []
    }

    @Test("every sequence of up to five events: resyncs, repairs, the worker's start and its batches are as stated")
    func everySequence() throws {
        let fixture = try IdentityMapTests.Fixture()
        let stores: [any AnyLiveStore] = [fixture.store("1"), fixture.store("2")]
        var checked = 0
        func run(_ events: [Event]) {
            var state = FeedState()
            var model = Model()
            for event in events {
                let context = Comment(rawValue: "\(events)")
                switch event {
                case .listens, .resumed:
                    let step = state.feedListens(resumed: event == .resumed)
                    let expected = model.gate == .withoutFeed || (event == .resumed && model.failedSinceResume)
                    #expect(step.resyncEverything == expected, context)
                    #expect(step.release.isEmpty, context)
                    model.gate = .listening
                    if event == .resumed { model.failedSinceResume = false }
                case .reconnected:
                    #expect(state.feedReconnected().resyncEverything, context)
                    model.gate = .listening
                    model.failedSinceResume = false
                case .givesUp:
                    #expect(state.giveUpWaiting().isEmpty, context)
                    if model.gate != .listening { model.gate = .withoutFeed }
                case .failed, .failedForGood:
                    let repairable = event == .failed
                    let repair = state.rereadFailed(repairable: repairable)
                    #expect((repair != nil) == (repairable && !model.repairScheduled), context)
                    if let repair { #expect(repair.delay > .zero && repair.attempt >= 1, context) }
                    model.failedSinceResume = true
                    if repairable { model.repairScheduled = true }
                case .repairStarts:
                    state.repairStarts()
                    model.repairScheduled = false
                    model.failedSinceResume = false
                case .markFirst, .markBoth:
                    let marking = event == .markFirst ? [stores[0]] : stores
                    #expect(state.markStale(marking) == !model.workerRuns, context)
                    model.workerRuns = true
                    model.marked.formUnion(marking.map { ObjectIdentifier($0) })
                case .nextBatch:
                    let batch = state.nextStaleBatch()
                    if model.marked.isEmpty {
                        #expect(batch == nil, context)
                        model.workerRuns = false
                    } else {
                        #expect(batch.map { Set($0.map { ObjectIdentifier($0) }) } == model.marked, context)
                        model.marked = []
                    }
                }
                #expect(state.gate.isOpen == (model.gate != .closed), context)
                #expect(state.readFailed == model.failedSinceResume, context)
                #expect(state.isRefreshing == model.workerRuns, context)
            }
            checked += 1
        }
        // Every sequence of each length, counted out in base `events.count`.
        let events = Event.allCases
        for length in 0...5 {
            for number in 0..<Int(pow(Double(events.count), Double(length))) {
                var digits = number
                run((0..<length).map { _ in
                    defer { digits /= events.count }
                    return events[digits % events.count]
                })
            }
        }
        #expect(checked == (0...5).reduce(0) { $0 + Int(pow(Double(events.count), Double($1))) })
        withExtendedLifetime(stores) {}
    }

    @Test("reads waiting for the feed are let go once each: by the feed listening, or by giving up on it; one that leaves is not")
    func waiters() async throws {
        let state = Locked(FeedState())
        var released = 0
        // Two wait at a closed gate; the first to come arms the deadline.
        async let first = wait(at: state)
        async let second = wait(at: state)
        #expect(try await eventually { state.withLock { $0.gateWaiters } == 2 })
        let step = state.withLock { $0.feedListens() }
        #expect(!step.resyncEverything && step.release.count == 2)
        for waiter in step.release { waiter.resume(); released += 1 }
        let armed = try await [first, second]
        #expect(released == 2 && armed.filter { $0 }.count == 1)
        // The gate is open now: a read starts at once, and giving up lets nobody go.
        let id = state.withLock { $0.nextWaiter() }
        let started = Locked(false)
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let (mayStart, deadline) = state.withLock { $0.enter(id, continuation, timeout: .seconds(1)) }
            started.withLock { $0 = mayStart && deadline == nil }
            continuation.resume()  // as the repository does when it may start
        }
        #expect(started.withLock { $0 } && state.withLock { $0.gateWaiters } == 0 && state.withLock { $0.giveUpWaiting() }.isEmpty)
    }

    @Test("a read that gives up waiting leaves the gate; the rest are let go when the feed fails, and it then goes ahead, to be resynced")
    func givingUp() async throws {
        let state = Locked(FeedState())
        async let staying = wait(at: state)
        let leaving = state.withLock { $0.nextWaiter() }
        let left = Task {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                _ = state.withLock { $0.enter(leaving, continuation, timeout: .seconds(1)) }
            }
        }
        #expect(try await eventually { state.withLock { $0.gateWaiters } == 2 })
        state.withLock { $0.leave(leaving) }?.resume(throwing: CancellationError())
        await #expect(throws: CancellationError.self) { try await left.value }
        let rest = state.withLock { $0.giveUpWaiting() }
        #expect(rest.count == 1)
        rest.forEach { $0.resume() }
        _ = try await staying
        #expect(state.withLock { $0.gate.isOpen })
        #expect(state.withLock { $0.feedListens() }.resyncEverything)
    }

    /// Waits at the gate until let go; whether this waiter armed the gate's deadline.
    private func wait(at state: Locked<FeedState>) async throws -> Bool {
        let id = state.withLock { $0.nextWaiter() }
        let armed = Locked(false)
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let (mayStart, deadline) = state.withLock { $0.enter(id, continuation, timeout: .seconds(60)) }
            #expect(!mayStart)
            armed.withLock { $0 = deadline != nil }
        }
        return armed.withLock { $0 }
    }
}
