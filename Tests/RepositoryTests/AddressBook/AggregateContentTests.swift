import AddressBookKit
import Foundation
@testable import Repository
import Testing

/// An aggregate's fields: what an edit changed, and carrying those fields over another state.
@Suite("Aggregate content")
struct AggregateContentTests {
    typealias Content = AggregateContent<AddressBookKit.Person>
    let a = AddressBookKit.Address(street: "a")
    let b = AddressBookKit.Address(street: "b")
    let c = AddressBookKit.Address(street: "c")

    func person(_ name: String, _ addresses: [AddressBookKit.Address]) -> AddressBookKit.Person {
        AddressBookKit.Person(id: 1, name: name, addresses: addresses)
    }

    func street(_ address: AddressBookKit.Address, _ street: String) -> AddressBookKit.Address {
        AddressBookKit.Address(id: address.id, street: street)
    }

    @Test("disjoint edits of the root, of children and of the structure all survive")
    func disjoint() throws {
        let base = person("Ada", [a, b])
        let mine = person("Ada Lovelace", [street(a, "a2"), b, c])      // rename, edit a, append c
        let theirs = person("Ada", [a, street(b, "b2")])                 // edit b
        let fields = try Content.fields(changedFrom: base, to: mine)
        #expect(fields == [.root("name"), .child(a.id, "street"), .presence(c.id)])
        #expect(try Content.replacing(fields, in: theirs, from: mine) == person("Ada Lovelace", [street(a, "a2"), street(b, "b2"), c]))
        #expect(Content.differing(theirs, base, among: fields).isEmpty)  // they changed none of mine: no conflict
    }

    @Test("the same column changed on both sides differs from the base: a conflict, named by row")
    func sameColumn() throws {
        let base = person("Ada", [a])
        let mine = person("Ada", [street(a, "mine")])
        let theirs = person("Ada", [street(a, "theirs")])
        let fields = try Content.fields(changedFrom: base, to: mine)
        #expect(Content.differing(theirs, base, among: fields) == [.child(a.id, "street")])
        #expect(fields.map(Content.name) == ["addresses[\(a.id)].street"])
    }

    @Test("their additions and removals stay; my reordering wins; an edit of a child they deleted has nowhere to go")
    func structure() throws {
        let base = person("Ada", [a, b])
        let mine = person("Ada", [street(b, "b2"), a])                   // reorder + edit b
        let theirs = person("Ada", [a, c])                               // delete b, add c
        let fields = try Content.fields(changedFrom: base, to: mine)
        #expect(fields == [.order, .child(b.id, "street")])
        #expect(try Content.replacing(fields, in: theirs, from: mine) == person("Ada", [a, c]))
        #expect(Content.differing(theirs, base, among: fields) == [.child(b.id, "street")])  // reported as a conflict…
        #expect(Content.conflictNames([.child(b.id, "street"), .child(b.id, "city"), .order], theirs: theirs)
                == ["addresses[\(b.id)] (removed)", "order of addresses"])  // …naming the removal, not a column nobody changed
        let reordered = try Content.replacing([.order], in: person("Ada", [a, b, c]), from: person("Ada", [b, a]))
        #expect(reordered == person("Ada", [b, a, c]))
    }

    @Test("children appended on both sides both stay, each after its predecessor")
    func concurrentAppends() throws {
        let base = person("Ada", [a])
        let mine = person("Ada", [a, b])
        let theirs = person("Ada", [a, c])
        let merged = try Content.replacing(Content.fields(changedFrom: base, to: mine), in: theirs, from: mine)
        #expect(merged == person("Ada", [a, b, c]))
        #expect(try Content.replacing([.presence(a.id)], in: merged, from: person("Ada", [b, c])) == person("Ada", [b, c]))
    }
}
