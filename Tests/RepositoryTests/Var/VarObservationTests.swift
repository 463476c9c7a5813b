import Foundation
import IdentifiedCollections
import Observation
import Repository
import Testing

@Suite("Var observation")
struct VarObservationTests {
    @Test("observers get old, new and the author; a plain set has none")
    func updateAndAuthor() {
        let name = Var("Ada")
        let updates = Recorder<Update<String>>()
        let subscription = name.observe { updates.append($0) }
        let editor = Author("editor")
        name.value = "Grace"
        name.set("Edsger", as: editor)
        #expect(updates.all == [Update(old: "Ada", new: "Grace"), Update(old: "Grace", new: "Edsger", author: editor)])
        subscription.cancel()
    }

    @Test("a NaN part is not changed by a change elsewhere: its observers and Observation stay quiet; a change to a number is told")
    func notANumberPart() {
        struct Sample: Equatable, Sendable { var x: Double; var n: Int }
        let sample = Var(Sample(x: .nan, n: 0))
        let told = Recorder<Double>()
        let fired = Recorder<Bool>()
        let subscription = sample[\.x].observe { told.append($0.new) }
        defer { subscription.cancel() }
        withObservationTracking { _ = sample[\.x].value } onChange: { fired.append(true) }
        sample[\.n].value = 1
        sample.update { $0.x = .nan }
        #expect(told.all.isEmpty)
        #expect(fired.all.isEmpty)
        sample[\.x].value = 2
        #expect(told.all == [2])
        #expect(fired.all == [true])
    }

    @Test("initial: true sends the current value first, marked initial")
    func initialValue() {
        let count = Var(5)
        let updates = Recorder<Update<Int>>()
        let subscription = count.observe(initial: true) { updates.append($0) }
        count.value = 6
        #expect(updates.all == [Update(old: 5, new: 5, isInitial: true), Update(old: 5, new: 6)])
        subscription.cancel()
    }

    @Test("a cancelled or released subscription stops delivery")
    func cancellation() {
        let count = Var(0)
        let seen = Recorder<Int>()
        let subscription = count.observe { seen.append($0.new) }
        count.value = 1
        subscription.cancel()
        count.value = 2
        do {
            _ = count.observe { seen.append($0.new * 100) }  // released at once
        }
        count.value = 3
        #expect(seen.all == [1])
    }

    @Test("a change made inside a handler is delivered after the current update, in order")
    func reentrantOrdering() {
        let value = Var(0)
        let log = Recorder<String>()
        let first = value.observe { update in
            log.append("A\(update.new)")
            if update.new == 1 { value.value = 2 }
        }
        let second = value.observe { log.append("B\($0.new)") }
        value.value = 1
        #expect(log.all == ["A1", "B1", "A2", "B2"])
        _ = (first, second)
    }

    @Test("fine-grained: an observer of book[id: a][\\.name] ignores other people and other fields")
    func fineGrained() {
        let book = Var(makeBook())
        let names = Recorder<String?>()
        let subscription = book[id: 1][\.name].observe { names.append($0.new) }
        book[id: 2][\.name].value = "Grace Hopper"
        book[id: 1][\.address][\.city].value = "Cambridge"
        book.update { $0.move(fromOffsets: [0], toOffset: 3) }
        #expect(names.all.isEmpty)
        book[id: 1][\.name].value = "Augusta"
        book.update { $0.remove(id: 1) }
        #expect(names.all == ["Augusta", nil])
        subscription.cancel()
    }

    @Test("an observer of a position hears a remove-then-refill of it: from what it last saw there to what is there now")
    func positionRefilled() {
        let people = Var(Array(makeBook()))
        let seen = Recorder<(old: String, new: String)>()
        let subscription = people[2][\.name].observe { seen.append(($0.old, $0.new)) }
        people.value.removeLast()
        #expect(seen.all.isEmpty, "the position does not exist")
        people.value.append(Person(id: 9, name: "Barbara", address: Address(street: "", city: "")))
        people.value.removeLast()
        people.value.append(Person(id: 10, name: "Barbara", address: Address(street: "", city: "")))   // the same name there
        people[2][\.name].value = "Barbara L."
        #expect(seen.all.map { "\($0.old)→\($0.new)" } == ["Edsger→Barbara", "Barbara→Barbara L."])
        subscription.cancel()
    }

    @Test("concurrent writers: observers see a gap-free chain of updates")
    func concurrentChain() async {
        let value = Var(0)
        let broken = Recorder<Int>()
        let last = Recorder<Int>()
        let subscription = value.observe { update in
            if let previous = last.all.last, previous != update.old { broken.append(update.old) }
            last.append(update.new)
        }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 { group.addTask { for _ in 0..<2_000 { value.update { $0 += 1 } } } }
        }
        #expect(last.count == 8_000)
        #expect(broken.all.isEmpty)
        subscription.cancel()
    }

    @Test("reading value inside withObservationTracking registers the access")
    func swiftObservation() {
        let person = Var(makeBook()[0])
        let changed = Recorder<Bool>()
        withObservationTracking {
            _ = person[\.name].value
        } onChange: {
            changed.append(true)
        }
        person[\.name].value = "Lovelace"
        #expect(changed.all == [true])
    }
}
