import IdentifiedCollections
import Observation
import Repository
import Testing

/// A change of text spelling alone — a precomposed `é` to `e` and a combining accent, equal to
/// `String`'s `==` — is a change to observers of the parts that hold it, as it is to the database.
@Suite("Var: text spelled otherwise is a change")
struct VarTextChangeTests {
    struct Address: Equatable, Sendable {
        var street: String
        var lines: [String]
        var note: String?
    }

    struct Person: Equatable, Sendable, Identifiable {
        var id: Int
        var name: String
        var address: Address
        var visits: Int
    }

    static let composed = "Jos\u{E9}"
    static let decomposed = "Jose\u{301}"

    static func person(_ street: String, line: String = "a", note: String? = nil) -> Person {
        Person(id: 1, name: "Ada", address: Address(street: street, lines: ["x", line], note: note), visits: 0)
    }

    @Test("observers of a struct part, of a derived value and of an element are told of a respelling inside; not of a copy or an equal rebuild")
    func respellingInsideAPart() {
        #expect(Self.composed == Self.decomposed)  // what this suite is about
        let person = Var(Self.person(Self.composed))
        let addresses = Recorder<String>()
        let derived = Recorder<String>()
        let first = person[\.address].observe { addresses.append($0.new.street) }
        let second = person.map { $0.address }.observe { derived.append($0.new.street) }
        defer { first.cancel(); second.cancel() }

        person.update { $0.address.street = Self.decomposed }           // the spelling alone
        person.update { $0.visits += 1 }                                 // the address copied
        person.update { $0.address = Self.person(Self.decomposed).address }  // rebuilt, the same text
        person.update { $0.address.lines[1] = "b" }
        person.update { $0.address.lines[1] = "b" }
        person.update { $0.address.note = Self.composed }
        person.update { $0.address.note = Self.decomposed }             // inside an optional

        let expected = [Self.decomposed, Self.decomposed, Self.decomposed, Self.decomposed]
        #expect(addresses.all.map { Array($0.unicodeScalars) } == expected.map { Array($0.unicodeScalars) })
        #expect(derived.all.map { Array($0.unicodeScalars) } == expected.map { Array($0.unicodeScalars) })
    }

    @Test("an observer of an element, by id and by index, is told of its respelling")
    func respellingOfAnElement() {
        let people = Var(IdentifiedArrayOf<Person>(uniqueElements: [Self.person(Self.composed)]))
        let byID = Recorder<String>()
        let byIndex = Recorder<String>()
        let first = people[id: 1].observe { $0.new.map { byID.append($0.address.street) } }
        let second = people[0].observe { byIndex.append($0.new.address.street) }
        defer { first.cancel(); second.cancel() }
        people.update { $0[id: 1]?.address.street = Self.decomposed }
        #expect(byID.all.map { Array($0.unicodeScalars) } == [Array(Self.decomposed.unicodeScalars)])
        #expect(byIndex.all.map { Array($0.unicodeScalars) } == [Array(Self.decomposed.unicodeScalars)])
    }

    @Test("Swift Observation of a struct part is invalidated by a respelling inside it")
    func observationTracking() {
        let person = Var(Self.person(Self.composed))
        let invalidated = Recorder<Bool>()
        withObservationTracking {
            _ = person[\.address].value
        } onChange: {
            invalidated.append(true)
        }
        person.update { $0.visits += 1 }
        #expect(invalidated.all.isEmpty)
        person.update { $0.address.street = Self.decomposed }
        #expect(invalidated.all == [true])
    }
}
