import Dispatch
import Synchronization
import Repository
import Testing

@Suite("Var delivery and derived values")
struct VarDeliveryTests {
    @Test("delivery on a DispatchQueue keeps the order")
    func onQueue() async {
        let value = Var(0)
        let queue = DispatchQueue(label: "observer")
        let seen = Recorder<Int>()
        let subscription = value.observe(on: queue) { update in
            dispatchPrecondition(condition: .onQueue(queue))
            seen.append(update.new)
        }
        for index in 1...100 { value.value = index }
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
        #expect(seen.all == Array(1...100))
        subscription.cancel()
    }

    @Test("delivery on a concurrent queue: in order, one handler at a time, on that queue's threads")
    func onConcurrentQueue() async throws {
        let value = Var(0)
        let queue = DispatchQueue(label: "concurrent observer", attributes: .concurrent)
        let seen = Recorder<Int>()
        let running = Running()
        let subscription = value.observe(on: queue) { update in
            if running.enter() > 1 { Issue.record("two handlers ran at once") }
            defer { running.leave() }
            seen.append(update.new)
        }
        for index in 1...5000 { value.value = index }
        #expect(try await eventually { seen.all.count == 5000 })
        #expect(seen.all == Array(1...5000))
        subscription.cancel()
    }

    /// How many handlers run at once.
    final class Running: Sendable {
        private let count = Mutex(0)
        func enter() -> Int { count.withLock { $0 += 1; return $0 } }
        func leave() { count.withLock { $0 -= 1 } }
    }

    @Test("delivery on the main actor keeps the order")
    func onMainActor() async {
        let value = Var(0)
        let seen = Recorder<Int>()
        let subscription = value.observeOnMainActor { update in
            MainActor.preconditionIsolated()
            seen.append(update.new)
        }
        for index in 1...20 { value.value = index }
        await MainActor.run {}
        await withCheckedContinuation { continuation in DispatchQueue.main.async { continuation.resume() } }
        #expect(seen.all == Array(1...20))
        subscription.cancel()
    }

    @Test("values is the current value, then each new one")
    func values() async {
        let value = Var("a")
        var iterator = value.values.makeAsyncIterator()
        #expect(await iterator.next() == "a")
        value.value = "b"
        value.value = "c"
        #expect(await iterator.next() == "b")
        #expect(await iterator.next() == "c")
    }

    @Test("updates is each later update")
    func updates() async {
        let value = Var(1)
        var iterator = value.updates.makeAsyncIterator()
        value.set(2, as: Author("me"))
        #expect(await iterator.next() == Update(old: 1, new: 2, author: Author("me")))
    }

    @Test("map, filter, removeDuplicates and unwrapped")
    func derived() {
        let person = Var(makeBook()[0])
        let length = person.map { $0.name.count }
        let lengths = Recorder<Int>()
        let s1 = length.observe { lengths.append($0.new) }
        person[\.name].value = "Bob"       // 3 chars: length changed from 3? "Ada" is 3 -> no update
        person[\.name].value = "Grace"     // 5
        #expect(lengths.all == [5])
        #expect(length.value == 5)

        let number = Var(0)
        let evens = Recorder<Int>()
        let s2 = number.filter { $0.isMultiple(of: 2) }.observe { evens.append($0.new) }
        for index in 1...6 { number.value = index }
        #expect(evens.all == [2, 4, 6])

        let distinct = Recorder<Int>()
        let s3 = number.removeDuplicates().observe { distinct.append($0.new) }
        number.value = 6
        number.value = 7
        #expect(distinct.all == [7])

        let optional = Var<String?>(nil)
        let unwrapped = optional.unwrapped(or: "none")
        #expect(unwrapped.value == "none")
        let texts = Recorder<String>()
        let s4 = unwrapped.observe { texts.append($0.new) }
        optional.value = "some"
        #expect(texts.all == ["some"])
        _ = (s1, s2, s3, s4)
    }
}
