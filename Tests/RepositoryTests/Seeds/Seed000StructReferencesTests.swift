import AddressBookKit
import Dispatch
import IdentifiedCollections
import Repository
import Testing

/// Seed 000: Chris Eidhof, "Struct References" (`../shared/seeds/000_*`). The article's `Ref` is
/// this package's `Var`: `Ref(initialValue:)` is `Var(_:)`, `addObserver` is `observe`, and a
/// disposable set to nil is a `Subscription` released.
///
/// Not run, being the article's implementation of `Ref` rather than a use of it: `final class
/// Ref<A>` with `init(get:set:addObserver:)`, `convenience init(initialValue:)`, and the key-path
/// and index subscripts' bodies. Their behaviour is what the tests below check through `Var`.
@Suite("Seed 000: Eidhof's struct references")
struct Seed000StructReferencesTests {
    // The article's model: "让我们用结构体来创建一个通讯录".
    struct Address: Equatable, Sendable {
        var street: String
    }
    struct Person: Equatable, Sendable {
        var name: String
        var addresses: [Address]
    }
    typealias Addressbook = [Person]

    /// The article's `PersonVC`, on a `Var<Person>`: it hears every change and writes back.
    final class PersonVC {
        let person: Var<Person>
        var disposeBag: Any?
        let printed = Recorder<String>()
        init(person: Var<Person>) {
            self.person = person
            disposeBag = person.observe { [printed] update in
                printed.append("update view for new person value: \(update.new)")
            }
        }

        func change() {
            person.value.name = "New Name"
        }
    }

    /// The first `PersonVC`, over a class `Person` ("如果把 `人` 定义成一个类"): its point — a change
    /// made through one holder is seen by every other — holds for a `Var` over the struct.
    @Test("the class PersonVC's change() is seen by everyone holding the person, with a struct underneath")
    func classPersonVCSharing() {
        let person = Var(Person(name: "Test", addresses: [Address(street: "Main St")]))
        let viewController = PersonVC(person: person)
        let list = person                                   // the list view holds the same person
        viewController.change()
        #expect(list.value.name == "New Name")
        #expect(viewController.printed.all == [#"update view for new person value: Person(name: "New Name", addresses: [RepositoryTests.Seed000StructReferencesTests.Address(street: "Main St")])"#])
    }

    @Test("a reference to the first person's name writes back into the address book")
    func nameOfFirstPersonWritesBack() {
        let addressBook = Var<Addressbook>([])
        addressBook.value.append(Person(name: "Test", addresses: []))
        let firstPerson: Var<Person> = addressBook[0]
        let nameOfFirstPerson: Var<String> = firstPerson[\.name]
        nameOfFirstPerson.value = "New Name"
        #expect(addressBook.value == [Person(name: "New Name", addresses: [])])
        // "shows [Person(name: "New Name", addresses: [])]": printed in a collection, Swift qualifies the type.
        #expect("\(addressBook.value)" == #"[RepositoryTests.Seed000StructReferencesTests.Person(name: "New Name", addresses: [])]"#)
    }

    @Test("myOwnCopy = firstPerson.value is an independent copy, without NSCopying")
    func myOwnCopy() {
        let addressBook = Var<Addressbook>([Person(name: "Test", addresses: [])])
        let firstPerson = addressBook[0]
        var myOwnCopy: Person = firstPerson.value
        firstPerson[\.name].value = "Changed under us"
        #expect(myOwnCopy.name == "Test")
        myOwnCopy.addresses.append(Address(street: "Mine"))
        #expect(addressBook.value[0].addresses.isEmpty)
    }

    @Test("an observer of the address book prints the whole book; setting the disposable to nil stops it")
    func observeAndDispose() {
        let addressBook = Var<Addressbook>([])
        let printed = Recorder<Addressbook>()
        var disposable: Any?
        disposable = addressBook.observe { printed.append($0.new) }
        addressBook.value.append(Person(name: "Test", addresses: []))
        addressBook[0][\.name].value = "New Name"
        #expect(printed.all == [[Person(name: "Test", addresses: [])], [Person(name: "New Name", addresses: [])]])
        #expect(disposable is Subscription)
        disposable = nil                                    // stop observing
        addressBook.value.removeAll()
        #expect(printed.count == 2)
    }

    /// The article: "in the current implementation any change of the address book fires it".
    /// Here it fires only when the name changed — the "more features" the article promised.
    @Test("an observer of nameOfFirstPerson prints a string, and only when the name changed")
    func observeNameOfFirstPerson() {
        let addressBook = Var<Addressbook>([Person(name: "Test", addresses: [])])
        let nameOfFirstPerson = addressBook[0][\.name]
        let printed = Recorder<String>()
        let subscription = nameOfFirstPerson.observe { printed.append($0.new) }
        addressBook[0][\.addresses].value.append(Address(street: "Elsewhere"))
        addressBook.value.append(Person(name: "Second", addresses: []))
        #expect(printed.all.isEmpty)
        nameOfFirstPerson.value = "New Name"
        nameOfFirstPerson.value = "Newer Name"              // the latest value, not the initial one
        #expect(printed.all == ["New Name", "Newer Name"])
        subscription.cancel()
    }

    @Test("PersonVC on a Ref<Person>: it is told of every change, and change() writes back into the book")
    func personVCOnAReference() {
        let addressBook = Var<Addressbook>([Person(name: "Test", addresses: [])])
        let viewController = PersonVC(person: addressBook[0])
        addressBook[0][\.addresses].value.append(Address(street: "Elsewhere"))
        viewController.change()
        #expect(addressBook.value == [Person(name: "New Name", addresses: [Address(street: "Elsewhere")])])
        #expect(viewController.printed.all.map { $0.contains(#"name: "New Name""#) } == [false, true])
    }

    @Test("the address book wrapped in the article's History: undo and redo through source[\\.value]; PersonVC unchanged")
    func articleHistory() {
        let source: Var<EidhofHistory<Addressbook>> = Var(EidhofHistory(initialValue: []))
        let addressBook: Var<Addressbook> = source[\.value]
        addressBook.value.append(Person(name: "Test", addresses: []))
        let viewController = PersonVC(person: addressBook[0])
        addressBook[0].value.name = "New Name"
        #expect("\(addressBook[0].value)" == #"Person(name: "New Name", addresses: [])"#)
        source.value.undo()
        #expect("\(addressBook[0].value)" == #"Person(name: "Test", addresses: [])"#)
        source.value.redo()
        #expect(addressBook[0].value.name == "New Name")
        #expect(viewController.printed.all.map { $0.contains("New Name") } == [true, false, true])
    }

    /// The same, with this package's `History` over the address book instead of the article's.
    @Test("the same undo and redo with the package's History")
    func packageHistory() {
        let addressBook = Var<Addressbook>([])
        let history = History(addressBook)
        addressBook.value.append(Person(name: "Test", addresses: []))
        addressBook[0].value.name = "New Name"
        history.undo()
        #expect(addressBook[0].value == Person(name: "Test", addresses: []))
        history.redo()
        #expect(addressBook[0].value.name == "New Name")
        history.undo()
        history.undo()
        #expect(addressBook.value.isEmpty && !history.canUndo)
    }

    /// The puzzle: "print(p0.value) // what does this print?" An index reference names a
    /// position, so it prints the person who moved into it; `[id:]` follows the person instead.
    @Test("the removeFirst() puzzle: p0 prints the second person; an id reference follows the first and becomes nil")
    func removeFirstPuzzle() {
        let twoPeople: Var<Addressbook> = Var([Person(name: "One", addresses: []), Person(name: "Two", addresses: [])])
        let p0 = twoPeople[0]
        twoPeople.value.removeFirst()
        #expect("\(p0.value)" == #"Person(name: "Two", addresses: [])"#)

        let byName = Var(IdentifiedArray(uniqueElements: [Person(name: "One", addresses: []), Person(name: "Two", addresses: [])], id: \.name))
        let one = byName[id: "One"], two = byName[id: "Two"]
        byName.value.removeFirst()
        #expect(one.value == nil)
        #expect(two.value == Person(name: "Two", addresses: []))
    }

    /// `Ref(initialValue: [], queue: DispatchQueue(label: "private queue"))`: a `Var` is safe
    /// from any thread (its lock), so no value is confined to a queue; what the queue is for —
    /// observing on it — is `observe(on:)`.
    @Test("changes observed on a private queue, in order")
    func privateQueue() async {
        let source = Var<Addressbook>([])
        let queue = DispatchQueue(label: "private queue")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let seen = Recorder<Int>()
        let subscription = source.observe(on: queue) { update in
            if DispatchQueue.getSpecific(key: key) == true { seen.append(update.new.count) }
        }
        for name in ["One", "Two", "Three"] { source.value.append(Person(name: name, addresses: [])) }
        await drain(queue)
        #expect(seen.all == [1, 2, 3])
        subscription.cancel()
    }

    /// `MyDatabase.readPerson(id:) -> Var<Person>`: the address book's `readPerson(id:)`, a live
    /// handle onto a `people` row and its `addresses` rows.
    @Test("MyDatabase.readPerson(id:) -> Var<Person>: read, write back, and hear another process's change")
    func databaseReadPerson() async throws {
        let database = try await makeAddressBookDatabase()
        let book = AddressBook(database)
        let id = try await book.addPerson(name: "Test", streets: ["Main St"]).value.id
        let person: Var<AddressBookKit.Person> = try await book.readPerson(id: id)
        let names = Recorder<String>()
        let subscription = person[\.name].observe { names.append($0.new) }
        person[\.name].value = "New Name"
        person[\.addresses][0][\.street].value = "Elm St"
        try await person.save()
        let row = try await database.query("SELECT p.name, a.street FROM people p JOIN addresses a ON a.person_id = p.id WHERE p.id = $1", [id])[0]
        #expect(try row.decode(String.self, at: 0) == "New Name" && row.decode(String.self, at: 1) == "Elm St")
        try await psql("UPDATE people SET name = 'Changed Elsewhere' WHERE id = \(id)", database: database)
        #expect(try await eventually { person.value.name == "Changed Elsewhere" })
        #expect(names.all == ["New Name", "Changed Elsewhere"])
        subscription.cancel()
        book.close()
    }
}
