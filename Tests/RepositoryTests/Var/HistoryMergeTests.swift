import Foundation
import IdentifiedCollections
@testable import Repository
import Testing

/// Undo and redo never put back what another author changed, and take back exactly what a step
/// changed: no bit of another property moves (no JSON round trip).
@Suite("History: exact undo, and other authors' changes")
struct HistoryMergeTests {
    struct Note: Codable, Equatable, Sendable {
        var title: String
        var createdAt: Date
        var score: Double
        var amount: Decimal
        var big: Int64
        var tags: [String] = []
        var email: String?
    }

    struct Card: Identifiable, Codable, Equatable, Sendable {
        var id: Int
        var name: String
        var email: String?
    }

    static let me = Author("me")
    static let other = Author("someone else")

    static func note() -> Note {
        Note(title: "draft", createdAt: Date(timeIntervalSinceReferenceDate: 785_000_000.123_456), score: .nan,
             amount: Decimal(string: "12345678901234567890.123456789012345678")!, big: .max)
    }

    @Test("undo moves no property the step did not touch: microseconds, NaN, 38 digits, Int64.max exact")
    func exactUndo() {
        let note = Var(Self.note())
        let history = History(note)
        note[\.title].value = "final"
        history.undo()
        let back = note.value
        #expect(back.title == "draft")
        #expect(back.createdAt.timeIntervalSinceReferenceDate.bitPattern == Self.note().createdAt.timeIntervalSinceReferenceDate.bitPattern)
        #expect(back.score.isNaN && back.score.bitPattern == Double.nan.bitPattern)
        #expect(back.amount == Self.note().amount && back.big == .max)
        history.redo()
        #expect(note.value.title == "final" && note.value.score.isNaN)
        note[\.score].value = -.infinity
        history.undo()
        #expect(note.value.score.isNaN)
    }

    @Test("undo leaves an element another author removed, and names it")
    func removedByAnother() {
        let book = Var(IdentifiedArrayOf<Card>(uniqueElements: [Card(id: 1, name: "Ada"), Card(id: 2, name: "Grace")]))
        let grace = book[id: 2]
        let history = History(grace, recording: { $0 == Self.me })
        grace[\.name].set("Grace Hopper", as: Self.me)
        book[id: 2].set(nil, as: Self.other)
        let outcome = history.undo()
        #expect(book.value[id: 2] == nil)
        #expect(outcome.applied && outcome.conflicts == ["self"])
    }

    @Test("undo of a property of an optional element keeps another author's change to another property")
    func optionalElementProperties() {
        let book = Var(IdentifiedArrayOf<Card>(uniqueElements: [Card(id: 2, name: "Grace")]))
        let grace = book[id: 2]
        let history = History(grace, recording: { $0 == Self.me })
        grace[\.name].set("Grace Hopper", as: Self.me)
        grace[\.email].set("grace@navy.mil", as: Self.other)
        #expect(history.undo().conflicts.isEmpty)
        #expect(book.value[id: 2] == Card(id: 2, name: "Grace", email: "grace@navy.mil"))
        grace[\.name].set("Amazing Grace", as: Self.other)  // now the step's own property moved on
        let outcome = history.redo()
        #expect(outcome.conflicts == ["name"] && book.value[id: 2]?.name == "Amazing Grace")
    }

    @Test("a scalar, an enum-like value: taken back whole, or left and named when someone else changed it")
    func wholeValues() {
        let count = Var(1)
        let history = History(count, recording: { $0 == Self.me })
        count.set(2, as: Self.me)
        count.set(3, as: Self.other)
        #expect(history.undo().conflicts == ["self"] && count.value == 3)
        count.set(4, as: Self.me)
        #expect(history.undo().conflicts.isEmpty && count.value == 3)
    }

    /// Neither `Codable` nor `Equatable`: another author's change since the step is known by
    /// counting, not by comparing.
    struct Opaque: Sendable {
        var text: String
    }

    @Test("a value that cannot be compared: left and named when another author changed it since")
    func incomparable() {
        let value = Var(Opaque(text: "a"))
        let history = History(value, recording: { $0 == Self.me })
        value.set(Opaque(text: "b"), as: Self.me)
        #expect(history.undo().conflicts.isEmpty && value.value.text == "a")
        history.redo()
        value.set(Opaque(text: "c"), as: Self.other)
        #expect(history.undo().conflicts == ["self"] && value.value.text == "c")
    }

    @Test("a group made inside an observer of another author's change is one step")
    func groupInsideObserver() {
        let note = Var(Self.note())
        let history = History(note, recording: { $0 == Self.me })
        let subscription = note.observe { update in
            guard update.author == Self.other else { return }
            history.group {
                note[\.email].set("x@y", as: Self.me)
                note[\.tags].set(["t"], as: Self.me)
            }
        }
        note[\.title].set("theirs", as: Self.other)
        #expect(note.value.email == "x@y" && note.value.tags == ["t"])
        #expect(history.undo().applied)
        #expect(note.value.email == nil && note.value.tags == [] && note.value.title == "theirs")
        #expect(!history.canUndo)
        subscription.cancel()
    }

    @Test("groups inside a group are one step; a group on a part ends at the next undo")
    func nestedGroups() {
        var start = Self.note()
        start.score = 1                                          // NaN is not == to itself
        let note = Var(start)
        let history = History(note)
        history.group {
            note[\.title].value = "one"
            history.group { note[\.email].value = "two" }
            note[\.tags].value = ["three"]
        }
        history.undo()
        #expect(note.value == start)
        let title = note[\.title]
        let titles = History(title)
        titles.group {
            title.value = "a"
            note[\.email].value = "not a title"                  // a change this part does not see
        }
        #expect(titles.undo().applied && note.value.title == "draft")
    }
}
