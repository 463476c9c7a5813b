import Foundation
import IdentifiedCollections
import Observation
@testable import Repository
import Testing

/// Parts read under Swift Observation: kept only while Observation can still be tracking them,
/// never trapping on a part that is gone, and a write's cost independent of past reads.
@Suite("Var: parts kept for Swift Observation")
struct ObservedPartsTests {
    struct Item: Identifiable, Equatable, Sendable {
        var id: Int
        var name: String
    }

    struct Entry: Equatable, Sendable {
        var name: String
        var addresses: [String]
    }

    /// A `Var` over a store the test can ask how many parts it keeps.
    private func makeVar<Value>(_ value: Value) -> (Var<Value>, VarStore<Value>) {
        let store = VarStore(value)
        return (Var(root: store, modify: store.modify), store)
    }

    @Test("seed 000's History: an index part read, then the array shrinks under it — no trap, plain or tracked")
    func shrinkingUnderAnIndexPart() {
        let source = Var(EidhofHistory<[Entry]>(initialValue: []))
        let book: Var<[Entry]> = source[\.value]
        book.value.append(Entry(name: "Test", addresses: []))
        book[0].value.name = "New Name"
        #expect(book[0].value.name == "New Name")
        let fired = Recorder<Bool>()
        withObservationTracking { _ = book[0][\.name].value } onChange: { fired.append(true) }
        source.value.undo()
        #expect(book[0].value.name == "Test")
        source.value.redo()
        source.value.undo()
        source.value.undo()                                  // empty again: the part is gone
        #expect(book.value.isEmpty)
        #expect(fired.all == [true])                         // a part that is gone has changed
        source.value.redo()
        #expect(book[0].value.name == "Test")
    }

    @Test("a part read outside any tracking is not kept; one read under tracking is, until it is told")
    func keptWhileTracked() {
        let (person, store) = makeVar(Entry(name: "Ada", addresses: []))
        _ = person[\.name].value
        #expect(store.trackedPartCount == 0)
        let fired = Recorder<String>()
        withObservationTracking { _ = person[\.name].value } onChange: { fired.append("name") }
        #expect(store.trackedPartCount == 1)
        for index in 0..<100 { person[\.addresses].value.append("street \(index)") }
        #expect(fired.all.isEmpty && store.trackedPartCount == 1)   // fine-grained: still tracked
        person[\.name].value = "Grace"
        #expect(fired.all == ["name"])
        #expect(store.trackedPartCount == 0)                         // told: its tracking ended
    }

    @Test("a sub-reference that is held keeps the part it read while it is held; each tracking of it is told of the next change")
    func heldSubReference() {
        let (person, store) = makeVar(Entry(name: "Ada", addresses: []))
        var name: Var<String>? = person[\.name]
        _ = name!.value
        #expect(store.trackedPartCount == 1)                         // kept by the held reference
        person[\.addresses].value.append("street")
        #expect(store.trackedPartCount == 1)                         // another part changed
        name = nil
        person[\.addresses].value.append("road")                     // drains what the reference let go
        #expect(store.trackedPartCount == 0)
        var held: Var<String>? = person[\.name]
        let fired = Recorder<String>()
        for round in 0..<3 {
            withObservationTracking { _ = held!.value } onChange: { fired.append("round \(round)") }
            _ = held!.value                                          // read again: nothing registered anew
            person[\.addresses].value.append("elsewhere \(round)")
            #expect(fired.all.count == round)                        // fine-grained, each round
            held!.value = "name \(round)"
            #expect(fired.all == (0...round).map { "round \($0)" })  // told once, each round
        }
        #expect(store.trackedPartCount == 1)
        held = nil
        person[\.addresses].value.append("drain")
        #expect(store.trackedPartCount == 0)
    }

    @Test("a held sub-reference registers its part once: later reads reuse the key path it made")
    func heldSubReferenceRegistersOnce() {
        let (person, store) = makeVar(Entry(name: "Ada", addresses: []))
        let name = person[\.name]
        #expect(name.part.keyCache?.keyPath == nil)
        _ = name.value
        let first = name.part.keyCache?.keyPath
        #expect(first != nil && store.trackedPartCount == 1)
        for round in 0..<100 {
            _ = name.value
            name.value = "name \(round)"
        }
        #expect(name.part.keyCache?.keyPath === first && store.trackedPartCount == 1)
    }

    @Test("held sub-references tracked from many threads at once while others write: every tracking is told")
    func concurrentHeldTracking() async {
        let (list, store) = makeVar(IdentifiedArrayOf<Item>(uniqueElements: (0..<16).map { Item(id: $0, name: "n\($0)") }))
        let names = (0..<16).map { list[id: $0][\.name] }
        let fired = await trackWhileWriting(ids: 16, rounds: 2_000) { names[$0] }
        for id in 0..<16 { list[id: id][\.name].value = "final" }   // ends every tracking left
        // Every tracking fired: none registered its part just as a change forgot it. (Swift
        // Observation may call one tracking twice when two threads change its part at once.)
        #expect(Set(fired.all).count == 4 * 1_000)
        #expect(store.trackedPartCount <= 16)                        // at most what the held references read
    }

    /// 4 workers, each alternately tracking the name of one element (read through `name(id)`)
    /// and writing another's, `rounds` times over `ids` elements: the trackings told, by number.
    private func trackWhileWriting(ids: Int, rounds: Int, _ name: @escaping @Sendable (Int) -> Var<String?>) async -> Recorder<Int> {
        let fired = Recorder<Int>()
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for round in 0..<rounds {
                        let id = (worker * ids / 4 + round) % ids
                        if round.isMultiple(of: 2) {
                            let tracking = worker * rounds + round
                            withObservationTracking { _ = name(id).value } onChange: { fired.append(tracking) }
                        } else {
                            name(id).value = "w\(worker)r\(round)"
                        }
                    }
                }
            }
        }
        return fired
    }

    @Test("a tracking ended by one part lets go of every other part it read")
    func endedByAnotherPart() {
        let (book, store) = makeVar(IdentifiedArrayOf<Item>(uniqueElements: (0..<1_000).map { Item(id: $0, name: "n\($0)") }))
        let fired = Recorder<Bool>()
        withObservationTracking {
            for id in 0..<1_000 { _ = book[id: id][\.name].value }
        } onChange: { fired.append(true) }
        #expect(store.trackedPartCount == 1_000)
        book[id: 7][\.name].value = "seven"
        #expect(fired.all == [true])
        book[id: 8][\.name].value = "eight"                          // drains what the tracking let go
        #expect(store.trackedPartCount == 0)
    }

    @Test("100,000 distinct parts read, then 1,000 writes: nothing kept, so the writes cost what writes cost")
    func manyPartsReadThenWrites() {
        let count = 100_000
        let (list, store) = makeVar(IdentifiedArrayOf<Item>(uniqueElements: (0..<count).map { Item(id: $0, name: "n\($0)") }))
        let clock = ContinuousClock()
        let before = clock.measure { for round in 0..<1_000 { list[id: round % 10][\.name].value = "w\(round)" } }
        for id in 0..<count { _ = list[id: id].value }               // as a list view's rows read them
        #expect(store.trackedPartCount == 0)
        let after = clock.measure { for round in 0..<1_000 { list[id: round % 10][\.name].value = "x\(round)" } }
        // Tracked reads are kept only until their tracking ends.
        withObservationTracking {
            for id in 0..<count { _ = list[id: id].value }
        } onChange: {}
        #expect(store.trackedPartCount == count)
        let ending = clock.measure { list[id: 0][\.name].value = "ends the tracking" }
        let forgetting = clock.measure { list[id: 1][\.name].value = "forgets what the tracking read" }
        #expect(store.trackedPartCount == 0)
        let tracked = clock.measure { for round in 0..<1_000 { list[id: round % 10][\.name].value = "y\(round)" } }
        print("1,000 writes on a \(count)-element list: \(before) before any part was read, \(after) after reading \(count) parts; "
              + "with \(count) parts tracked, the write that ends the tracking \(ending), the next (forgets them) \(forgetting), "
              + "1,000 writes after \(tracked)")
    }

    @Test("parts tracked from many threads at once while others write: kept and told consistently")
    func concurrentTracking() async {
        let (list, store) = makeVar(IdentifiedArrayOf<Item>(uniqueElements: (0..<64).map { Item(id: $0, name: "n\($0)") }))
        let fired = await trackWhileWriting(ids: 64, rounds: 500) { list[id: $0][\.name] }
        for id in 0..<64 { list[id: id][\.name].value = "final" }   // ends every tracking left
        list[id: 0][\.name].value = "drain"
        #expect(store.trackedPartCount == 0)
        #expect(fired.count == 4 * 250)                              // every tracking fired exactly once
    }
}
