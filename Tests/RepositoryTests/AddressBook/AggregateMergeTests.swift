import AddressBookKit
import Foundation
@testable import Repository
import Testing

@Suite("Aggregate merge")
struct AggregateMergeTests {
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
        let (merged, conflicts) = try AggregateMerge.merge(base: base, mine: mine, theirs: theirs, keepingConflicts: false)
        #expect(merged == person("Ada Lovelace", [street(a, "a2"), street(b, "b2"), c]))
        #expect(conflicts.isEmpty)
    }

    @Test("the same column: named as a conflict, kept only when asked")
    func sameColumn() throws {
        let base = person("Ada", [a])
        let mine = person("Ada", [street(a, "mine")])
        let theirs = person("Ada", [street(a, "theirs")])
        let dropped = try AggregateMerge.merge(base: base, mine: mine, theirs: theirs, keepingConflicts: false)
        #expect(dropped.value == theirs)
        #expect(dropped.conflicts == ["addresses[\(a.id)].street"])
        let kept = try AggregateMerge.merge(base: base, mine: mine, theirs: theirs, keepingConflicts: true)
        #expect(kept.value == mine)
    }

    @Test("their additions and removals stay; my reordering wins; an edit of a child they deleted is a conflict")
    func structure() throws {
        let base = person("Ada", [a, b])
        let mine = person("Ada", [street(b, "b2"), a])                   // reorder + edit b
        let theirs = person("Ada", [a, c])                               // delete b, add c
        let (merged, conflicts) = try AggregateMerge.merge(base: base, mine: mine, theirs: theirs, keepingConflicts: false)
        #expect(merged == person("Ada", [a, c]))
        #expect(conflicts == ["addresses[\(b.id)] (deleted)"])
        let reordered = try AggregateMerge.merge(base: base, mine: person("Ada", [b, a]), theirs: person("Ada", [a, b, c]), keepingConflicts: false)
        #expect(reordered.value == person("Ada", [b, a, c]))
    }
}
