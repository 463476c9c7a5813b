import Foundation
import IdentifiedCollections
@testable import Repository
import Testing

@Suite("Var references (Eidhof's struct references)")
struct VarReferenceTests {
    @Test("a key-path sub-reference writes back into the root")
    func keyPathWritesBack() {
        let person = Var(makeBook()[0])
        let city = person[\.address][\.city]
        city.value = "Cambridge"
        #expect(person.value.address.city == "Cambridge")
        person[\.name].value = "Augusta Ada"
        #expect(person.value.name == "Augusta Ada")
        #expect(city.value == "Cambridge")
    }

    @Test("a value read out of a Var is a copy: changing it changes nothing shared")
    func copiesAreIndependent() {
        let people = Var(Array(makeBook()))
        var copy = people[0].value
        copy.name = "Changed"
        #expect(people.value[0].name == "Ada")
        #expect(people[0][\.name].value == "Ada")
    }

    @Test("the removeFirst() puzzle: an index reference names a position")
    func indexReferenceAfterRemoveFirst() {
        let people = Var(Array(makeBook()))
        let second = people[1]
        #expect(second.value.name == "Grace")
        people.update { _ = $0.removeFirst() }
        // Position 1 now holds Edsger: an index reference follows the position, not the person.
        #expect(second.value.name == "Edsger")
    }

    @Test("the removeFirst() puzzle: an id reference follows its element, then becomes nil")
    func idReferenceAfterRemoveFirst() {
        let book = Var(makeBook())
        let grace = book[id: 2]
        let ada = book[id: 1]
        book.update { _ = $0.removeFirst() }
        #expect(grace.value?.name == "Grace")
        #expect(ada.value == nil)
        book.update { $0.reverse() }
        #expect(grace.value?.name == "Grace")
        grace[\.name].value = "Grace Hopper"
        #expect(book.value[id: 2]?.name == "Grace Hopper")
    }

    @Test("setting an id reference to nil removes the element; setting a value puts it back")
    func idReferenceWrites() {
        let book = Var(makeBook())
        let edsger = book[id: 3]
        let removed = edsger.value
        edsger.value = nil
        #expect(book.value.ids == [1, 2])
        edsger.value = removed
        #expect(book.value.ids == [1, 2, 3])
    }

    @Test("setting an id reference to an element with another id replaces it in place under that id — or updates the one holding that id — and does not trap")
    func idReferenceSetToAnotherID() {
        let book = Var(makeBook())
        let grace = book[id: 2]
        grace.value = Person(id: 9, name: "Barbara", address: Address(street: "9 Lisp St", city: "Boston"))
        #expect(book.value.ids == [1, 9, 3] && book.value[id: 9]?.name == "Barbara")
        #expect(grace.value == nil)
        book[id: 1].value = Person(id: 3, name: "Edsger W.", address: Address(street: "3 Goto Lane", city: "Austin"))
        #expect(book.value.ids == [9, 3] && book.value[id: 3]?.name == "Edsger W.")
        book[id: 7].value = Person(id: 8, name: "New", address: Address(street: "", city: ""))
        #expect(book.value.ids == [9, 3, 8])
    }

    @Test("an edit of an element's id through a position of an IdentifiedArray is set as IdentifiedArray sets it, and does not trap")
    func positionEditOfAnID() {
        let book = Var(makeBook())
        let observed = Locked<[[Int]]>([])
        let subscription = book.observe { update in observed.withLock { $0.append(Array(update.new.ids)) } }
        defer { subscription.cancel() }
        book[0][\.id].value = 9  // a new id: replaces the element at the position
        #expect(book.value.ids == [9, 2, 3] && book.value[id: 9]?.name == "Ada")
        book[0][\.id].value = 3  // the id of another element: the two trade places, the edited one replaces it
        #expect(book.value.ids == [3, 2, 9])
        #expect(book.value[id: 3]?.name == "Ada" && book.value[id: 9]?.name == "Ada")
        book[1][\.name].value = "Grace H."  // an edit that keeps the id, in place
        #expect(book.value[1].name == "Grace H." && book.value.count == 3)
        #expect(observed.withLock { $0.count } == 3)
    }

    @Test("writing through the id reference of a removed element changes nothing")
    func writeToRemovedElement() {
        let book = Var(makeBook())
        let name = book[id: 3][\.name]
        book[id: 3].value = nil
        name.value = "ghost"
        #expect(book.value.count == 2)
        #expect(name.value == nil)
    }

    struct Contact: Identifiable, Equatable, Sendable {
        var id: Int
        var email: String?
        var name: String
    }

    @Test("nil written through an optional value's reference into an optional property clears it; into a property that is not optional, or while the value is nil, it is dropped")
    func nilIntoOptionalProperty() {
        let book = Var<IdentifiedArrayOf<Contact>>([Contact(id: 1, email: "a@example.com", name: "Ada")])
        book[id: 1][\.email].value = nil
        #expect(book.value[id: 1]?.email == nil && book.value[id: 1]?.name == "Ada")
        book[id: 1][\.email].value = "b@example.com"
        #expect(book.value[id: 1]?.email == "b@example.com")
        book[id: 1][\.name].value = nil
        #expect(book.value[id: 1]?.name == "Ada", "a name that is not optional stays")
        let single = Var<Contact?>(Contact(id: 2, email: "c@example.com", name: "Cy"))
        single[\.email].value = nil
        #expect(single.value?.email == nil)
        book[id: 9][\.email].value = "nobody@example.com"
        #expect(book.value.count == 1, "no element 9 to write into")
    }

    @Test("update is an atomic read-modify-write: 8 threads x 10,000 increments lose none")
    func concurrentUpdates() {
        let counter = Var(0)
        let seen = Recorder<Int>()
        let subscription = counter.observe { update in
            if update.new != update.old + 1 { seen.append(update.new) }
        }
        // Real OS threads, not tasks: on a 2-core machine the cooperative pool has 2 threads.
        let finished = DispatchSemaphore(value: 0)
        for _ in 0..<8 {
            Thread {
                for _ in 0..<10_000 { counter.update { $0 += 1 } }
                finished.signal()
            }.start()
        }
        for _ in 0..<8 { finished.wait() }
        #expect(counter.value == 80_000)
        #expect(seen.all.isEmpty, "every update must be old + 1, delivered in order")
        subscription.cancel()
    }
}
