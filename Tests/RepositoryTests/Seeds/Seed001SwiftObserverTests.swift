import Dispatch
import Foundation
import Repository
import Testing

/// Seed 001: the SwiftObserver 6.3 README (`../shared/seeds/001_*`), its observers, observables,
/// messengers, variables and promises; transforms, authors, caches and weak observables are in
/// ``Seed001SwiftObserverTransformsTests``. SwiftObserver's observer objects and their `Receiver`
/// are, here, the `Subscription`s a holder keeps; a `Messenger<Message>` is a root `Var`, which
/// tells its observers of every set, equal values included.
///
/// Not run: the `Package.swift`, `Podfile` and `import SwiftObserver` lines (installation), and the
/// library's own `protocol Observable` and `extension Messenger: Observable` (its internals).
@Suite("Seed 001: SwiftObserver's observers, messengers, variables and promises")
struct Seed001SwiftObserverTests {
    enum Color: Sendable { case blue, gray, red }

    /// `class Dog: Observer { let receiver = Receiver() }`: the observations live as long as the dog.
    final class Dog {
        var subscriptions = Set<Subscription>()
        let marvels = Recorder<Color>()
        func observe(_ sky: Var<Color>) -> Subscription {
            let subscription = sky.observe { [marvels] in marvels.append($0.new) }
            subscriptions.insert(subscription)
            return subscription
        }
    }

    @Test("dog.observe(Sky.shared): the dog hears the sky's colour; observing sends nothing by itself")
    func dogObservesSky() {
        let sky = Var(Color.blue)
        let dog = Dog()
        _ = dog.observe(sky)
        _ = dog.observe(sky)                                // several observations of one observable
        #expect(dog.marvels.all.isEmpty)
        sky.value = .gray
        #expect(dog.marvels.all == [.gray, .gray])
    }

    @Test("observations die with the observer, and with the observable")
    func observationsDieWithEitherSide() {
        let sky = Var(Color.blue)
        var dog: Dog? = Dog()
        let marvels = dog!.marvels
        _ = dog!.observe(sky)
        sky.value = .red
        dog = nil
        sky.value = .gray
        #expect(marvels.all == [.red])

        weak var goneSky: Var<Color>?
        let survivor = Dog()
        do {
            let temporarySky = Var(Color.blue)
            goneSky = temporarySky
            _ = survivor.observe(temporarySky)
        }
        #expect(goneSky == nil)                             // the dog's observation keeps no sky alive
    }

    /// `dog.stopObserving(Sky.shared)` and `dog.stopObserving()`. The observable's side,
    /// `Sky.shared.stopBeingObserved(by: dog)` and `stopBeingObserved()`, has no counterpart: a
    /// `Var` cannot end its observers' subscriptions (a gap, reported).
    @Test("stopObserving: one observation cancelled, then all of the dog's")
    func stopObserving() {
        let sky = Var(Color.blue), sun = Var(Color.red)
        let dog = Dog()
        let skyObservation = dog.observe(sky)
        _ = dog.observe(sun)
        skyObservation.cancel()                             // dog.stopObserving(Sky.shared)
        sky.value = .gray
        sun.value = .blue
        #expect(dog.marvels.all == [.blue])
        dog.subscriptions.removeAll()                       // dog.stopObserving()
        sun.value = .gray
        #expect(dog.marvels.all == [.blue])
    }

    /// Free observers: `observe(Sky.shared) { }` and `Sky.shared.observed { }` keep the observation
    /// in `FreeObserver.shared`. Here the subscription is the free observer, and must be kept.
    @Test("free observation: kept in a set it lasts, discarded it ends at once")
    func freeObservers() {
        let sky = Var(Color.blue)
        let seen = Recorder<Color>()
        var freeObserver = Set<Subscription>()
        sky.observe { seen.append($0.new) }.store(in: &freeObserver)
        _ = sky.observe { _ in seen.append(.red) }          // nobody keeps it: cancelled on release
        sky.value = .gray
        #expect(seen.all == [.gray])
        freeObserver.removeAll()
        sky.value = .blue
        #expect(seen.all == [.gray])
    }

    @Test("observeOnce: the first new colour, then the observation ends by itself")
    func observeOnce() {
        let sky = Var(Color.blue)
        let noticed = Recorder<Color>()
        sky.observeOnce { noticed.append($0.new) }          // the result ignored, as the README does
        sky.value = .gray
        sky.value = .red
        #expect(noticed.all == [.gray])
    }

    @Test("a text messenger: every message sent is received, the same one twice too")
    func textMessenger() {
        let textMessenger = Var("")                         // Messenger<String>()
        let received = Recorder<String>()
        let subscription = textMessenger.observe { received.append($0.new) }
        textMessenger.value = "my message"                  // textMessenger.send("my message")
        textMessenger.value = "my message"
        #expect(received.all == ["my message", "my message"])
        subscription.cancel()
    }

    /// `class Model: SuperModel, Observable` sending `.willUpdate`, `.didUpdate` and, from its
    /// `deinit`, `.willDie` through its messenger.
    final class Model {
        enum Event: Sendable { case willUpdate, didUpdate, willDie }
        let messenger = Var<Event?>(nil)
        func foo() { messenger.value = .willUpdate }
        func bar() { messenger.value = .didUpdate }
        deinit { messenger.value = .willDie }
    }

    @Test("a custom observable with an event enum, down to .willDie from its deinit")
    func customObservableModel() {
        var model: Model? = Model()
        let events = Recorder<Model.Event?>()
        let subscription = model!.messenger.observe { events.append($0.new) }
        model!.foo()
        model!.bar()
        model = nil
        #expect(events.all == [.willUpdate, .didUpdate, .willDie])
        subscription.cancel()
    }

    @Test("observing a Var: an Update carries the old and the new value")
    func variableUpdate() {
        let number = Var(42)
        let differences = Recorder<Int>()
        let subscription = number.observe { update in differences.append(update.new - update.old) }
        number.value = 50
        #expect(differences.all == [8])
        subscription.cancel()
    }

    /// `Var<String?>()` and `number <- 42`: no empty initializer and no `<-` here; `Var(nil)` and
    /// `value =` say it. SwiftObserver's `Var` is `Equatable` by value; this one by identity.
    @Test("setting a variable's value; two Vars with equal values are still two references")
    func variableValues() {
        let text = Var<String?>(nil)
        #expect(text.value == nil)
        text.value = "a text"
        #expect(text.value == "a text")
        let number = Var(23)
        #expect(number.value == 23)
        number.value = 42
        #expect(number.value == 42)
        #expect(Var(42) != number && number == number)
    }

    /// Numbers: `numVar.int` reads nil as zero, `numVar.int += 5`, `numVar <- Var(1) + 2`.
    /// `unwrapped(or: 0)` is the read; the arithmetic goes through `update` and `value`.
    @Test("an optional number read as zero, incremented, and set from another Var's value plus two")
    func numbers() {
        let numVar = Var<Int?>(nil)
        #expect(numVar.unwrapped(or: 0).value == 0)
        numVar.update { $0 = ($0 ?? 0) + 5 }
        #expect(numVar.value == 5)
        numVar.value = Var(1).value + 2
        #expect(numVar.value == 3)
    }

    /// `class Model: Codable { private(set) var text = Var("String Variable") }`.
    final class CodableModel: Codable {
        private(set) var text = Var("String Variable")
    }

    @Test("a class with a Var property is Codable; the Var encodes as its value")
    func codableVariable() throws {
        let data = try JSONEncoder().encode(CodableModel())
        #expect(String(decoding: data, as: UTF8.self) == #"{"text":"String Variable"}"#)
        let decoded = try JSONDecoder().decode(CodableModel.self, from: Data(#"{"text":"Decoded"}"#.utf8))
        #expect(decoded.text.value == "Decoded")
    }

    // MARK: - Promises

    /// No `Promise` type here; as the README foresees, async/await replaces it. A promise is a
    /// `Var<T?>` fulfilled once, and `whenFulfilled` awaits its first non-nil value (`values`).
    static func whenFulfilled<T: Sendable>(_ promise: some ObservableValue<T?>) async -> T? {
        for await value in promise.values {
            if let value { return value }
        }
        return nil
    }

    /// `getID()`: fulfilled later, from another thread (`getIDAsync`).
    static func promise<T: Sendable>(_ value: T) -> Var<T?> {
        let promise = Var<T?>(nil)
        DispatchQueue.global().async { promise.value = value }
        return promise
    }

    @Test("getID().whenFulfilled, and idPromise received twice — before and after it is fulfilled",
          .timeLimit(.minutes(5)))
    func promiseReceivedOnceAndAgain() async {
        #expect(await Self.whenFulfilled(Self.promise(7)) == 7)
        let idPromise = Self.promise(42)
        #expect(await Self.whenFulfilled(idPromise) == 42)
        #expect(await Self.whenFulfilled(idPromise) == 42)  // already fulfilled: at once
    }

    @Test("promises composed: then (sequential), and (concurrent), map", .timeLimit(.minutes(5)))
    func promiseComposition() async {
        let getInt = { Self.promise(3) }
        let getString = { (int: Int) in Self.promise(String(repeating: "a", count: int)) }
        let sequential = await Self.whenFulfilled(getString(await Self.whenFulfilled(getInt()) ?? 0))
        #expect(sequential == "aaa")
        async let int = Self.whenFulfilled(getInt())
        async let string = Self.whenFulfilled(getString(1))
        let both = await (int, string)
        #expect(both.0 == 3 && both.1 == "a")
        let mapped = getInt().map { $0.map { "\($0)" } }
        #expect(await Self.whenFulfilled(mapped) == "3")
    }
}
