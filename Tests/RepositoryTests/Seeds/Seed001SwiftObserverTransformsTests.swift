import Repository
import Testing

/// Seed 001: the SwiftObserver 6.3 README (`../shared/seeds/001_*`), its transforms, message
/// authors, cached messages, weak observables and ordered delivery. SwiftObserver's
/// `Messenger<Message>` is a root `Var` here; its `new()` is an update's `new`.
///
/// Not expressible, so not run (gaps, reported): replacing a transform's source,
/// `titleLength.origin.origin = title` — a ``Derived`` has no `origin`.
@Suite("Seed 001: SwiftObserver's transforms, authors and caches")
struct Seed001SwiftObserverTransformsTests {
    enum Color: Sendable { case blue, gray, red }

    /// `observer.observe(title).new().unwrap("Untitled").map({ $0.count })`. Unlike
    /// SwiftObserver's, this `map` sends only when the mapped value changed ("World" after "Hello").
    @Test("an ad hoc transform: an optional title's length, nil counted as \"Untitled\"")
    func adHocTitleLength() {
        let title = Var<String?>(nil)
        let lengths = Recorder<Int>()
        let subscription = title.unwrapped(or: "Untitled").map { $0.count }.observe { lengths.append($0.new) }
        for text in ["Hello", "World", nil, "Hi"] { title.value = text }
        #expect(lengths.all == [5, 8, 2])
        subscription.cancel()
    }

    @Test("a transform held as its own observable serves several observers")
    func standaloneTitleLength() {
        let title = Var<String?>(nil)
        let titleLength = title.unwrapped(or: "Untitled").map { $0.count }
        #expect(titleLength.value == 8)
        let first = Recorder<Int>(), second = Recorder<Int>()
        let subscriptions = [titleLength.observe { first.append($0.new) }, titleLength.observe { second.append($0.new) }]
        title.value = "Real Title"
        #expect(first.all == [10] && second.all == [10] && titleLength.value == 10)
        subscriptions.forEach { $0.cancel() }
    }

    @Test("map: String messages to Int?")
    func mapStringToInt() {
        let messenger = Var("")
        let stringToInt = messenger.map { Int($0) }
        let ints = Recorder<Int?>()
        let subscription = stringToInt.observe { ints.append($0.new) }
        for text in ["42", "x", "7"] { messenger.value = text }
        #expect(ints.all == [42, nil, 7])
        subscription.cancel()
    }

    @Test("new(): an error code's updates as its new values", .timeLimit(.minutes(5)))
    func newValues() async {
        let errorCode = Var(0)
        var newErrorCodes = errorCode.updates.map(\.new).makeAsyncIterator()
        errorCode.value = 404
        errorCode.value = 500
        #expect(await newErrorCodes.next() == 404)
        #expect(await newErrorCodes.next() == 500)
    }

    @Test("filter: only messages shorter than 10 characters")
    func filterShortMessages() {
        let messenger = Var("")
        let shortMessages = messenger.filter { $0.count < 10 }
        let received = Recorder<String>()
        let subscription = shortMessages.observe { received.append($0.new) }
        for text in ["short", "a rather long message", "tiny"] { messenger.value = text }
        #expect(received.all == ["short", "tiny"])
        subscription.cancel()
    }

    @Test("select: a handler without arguments, called for \"my notification\" only, each time it is sent")
    func selectNotification() {
        let messenger = Var("")
        let myNotifier = messenger.select("my notification")
        let notified = Recorder<Bool>()
        let subscription = myNotifier.observe { _ in notified.append(true) }
        for text in ["other", "my notification", "my notification", "other"] { messenger.value = text }
        #expect(notified.count == 2)
        subscription.cancel()
    }

    /// `errorCodes.unwrap()` drops nil messages. No transform here does (a `Derived` must have a
    /// value while the source is nil); `filter` and `if let` in the handler do it.
    @Test("unwrap(): nil error codes dropped")
    func unwrapDropsNil() {
        let errorCodes = Var<Int?>(nil)
        let alerts = Recorder<Int>()
        let subscription = errorCodes.filter { $0 != nil }.observe { if let code = $0.new { alerts.append(code) } }
        for code in [404, nil, 500] { errorCodes.value = code }
        #expect(alerts.all == [404, 500])
        subscription.cancel()
    }

    @Test("unwrap(0): nil points shown as 0")
    func unwrapWithDefault() {
        let points = Var<Int?>(nil)
        let pointsToShow = points.unwrapped(or: 0)
        let shown = Recorder<Int>()
        let subscription = pointsToShow.observe { shown.append($0.new) }
        for value in [3, nil, 5] { points.value = value }
        #expect(shown.all == [3, 0, 5])
        subscription.cancel()
    }

    @Test("chained: Int to String, single digits suppressed, back to Int, unwrapped")
    func chainedTransforms() {
        let numbers = Var(0)
        let received = Recorder<Int>()
        let subscription = numbers.map { "\($0)" }.filter { $0.count > 1 }.map { Int($0) }.observe { update in
            if let number = update.new { received.append(number) }
        }
        for number in [5, 42, 7, 100] { numbers.value = number }
        #expect(received.all == [42, 100])
        subscription.cancel()
    }

    @Test("map then receive: \"Will we go outside?\"")
    func willWeGoOutside() {
        let sky = Var(Color.blue)
        let printed = Recorder<String>()
        let subscription = sky.map { $0 == .blue }.observe { printed.append("Will we go outside? \($0.new ? "Yes" : "No")!") }
        for color in [Color.gray, .blue, .red] { sky.value = color }
        #expect(printed.all == ["Will we go outside? No!", "Will we go outside? Yes!", "Will we go outside? No!"])
        subscription.cancel()
    }

    // MARK: - Authors

    /// `number.set(42, as: controller)` and `observe(observable) { message, author in }`. A plain
    /// set has no author here (in SwiftObserver the observable itself is the author).
    @Test("set(_:as:) names the author; observers receive it with the update")
    func authorOfUpdate() {
        let controller = Author("controller")
        let number = Var(0)
        let authors = Recorder<Author?>()
        let subscription = number.observe { authors.append($0.author) }
        number.set(42, as: controller)
        number.value = 43
        #expect(authors.all == [controller, nil])
        subscription.cancel()
    }

    /// `class Collaborator: Observer`: ignores its own edits (`author !== self`). Authors here
    /// are values named by strings, so each collaborator needs a name of its own.
    final class Collaborator {
        let author: Author
        let heard = Recorder<String>()
        private let sharedText: Var<String>
        private var subscription: Subscription?

        /// With `answering`, it answers each edit it hears by editing the text itself.
        init(_ name: String, sharedText: Var<String>, answering: Bool = false) {
            author = Author(name)
            self.sharedText = sharedText
            subscription = sharedText.observe { [author, heard] update in
                guard update.author != author else { return }
                heard.append(update.new)                    // someone else edited the text
                if answering { sharedText.set(update.new + "!", as: author) }
            }
        }

        func editText() {
            sharedText.set("my new text", as: author)      // identify as author when editing
        }
    }

    @Test("collaborators on a shared text hear each other, not their own echoes: no loop")
    func collaborators() {
        let sharedText = Var("")
        let alice = Collaborator("alice", sharedText: sharedText)
        let bob = Collaborator("bob", sharedText: sharedText, answering: true)
        alice.editText()
        #expect(sharedText.value == "my new text!")
        #expect(bob.heard.all == ["my new text"] && alice.heard.all == ["my new text!"])
    }

    @Test("filterAuthor, from and notFrom")
    func filteringByAuthor() {
        let (joe, ann, hal9000) = (Author("joe"), Author("ann"), Author("HAL 9000"))
        let friends: Set = [joe, ann]
        let messenger = Var("")
        let friendMessages = Recorder<String>(), joesMessages = Recorder<String>(), humanMessages = Recorder<String>()
        let subscriptions = [
            // messenger.filterAuthor { friends.contains($0) }: no transform over an author
            // predicate here (from and notFrom take one author); the handler's guard does it.
            messenger.observe { update in
                guard let author = update.author, friends.contains(author) else { return }
                friendMessages.append(update.new)
            },
            messenger.from(joe).observe { joesMessages.append($0.new) },
            messenger.notFrom(hal9000).observe { humanMessages.append($0.new) },
        ]
        for (text, author) in [("hi", joe), ("hello", ann), ("I'm sorry, Dave", hal9000)] { messenger.set(text, as: author) }
        messenger.value = "anonymous"
        #expect(friendMessages.all == ["hi", "hello"] && joesMessages.all == ["hi"])
        #expect(humanMessages.all == ["hi", "hello", "anonymous"])
        subscriptions.forEach { $0.cancel() }
    }

    // MARK: - Cached messages, weak observables, order

    /// `class Model: Messenger<String>, ObservableCache`: `latestMessage` is the state, sent only
    /// when it changed. A `Var` is the state; `removeDuplicates()` is the `didSet` check; the
    /// latest message on demand (`send()`, `whenCached`) is `observe(initial: true)`.
    @Test("a state-based cache: the latest message at once, then only real changes")
    func stateBasedCache() {
        let state = Var("initial state")
        let messages = Recorder<Update<String>>()
        let subscription = state.removeDuplicates().observe(initial: true) { messages.append($0) }
        state.value = "initial state"
        state.value = "new state"
        #expect(messages.all == [Update(old: "initial state", new: "initial state", isInitial: true),
                                 Update(old: "initial state", new: "new state")])
        subscription.cancel()
    }

    /// `number.weak()` and `[Weak<Var<Int>>]`: Swift's own `weak` reference does it.
    struct WeakVar {
        weak var variable: Var<Int>?
    }

    @Test("a weakly held Var can be observed, and goes when its last strong holder does")
    func weakObservable() {
        var number: Var<Int>? = Var(12)
        var weakNumbers = [WeakVar]()
        weakNumbers.append(WeakVar(variable: number))
        let updates = Recorder<Int>()
        let subscription = weakNumbers[0].variable?.observe { updates.append($0.new) }
        number?.value = 13
        #expect(updates.all == [13])
        number = nil
        #expect(weakNumbers[0].variable == nil)
        subscription?.cancel()
    }

    /// "Observable objects deliver messages in the exact order `send` is called, also when
    /// observers call `send` from their handlers."
    @Test("a send from inside a handler is delivered after the one being handled, to everyone")
    func orderedReentrantDelivery() {
        let number = Var(0)
        let first = Recorder<Int>(), second = Recorder<Int>()
        let subscriptions = [
            number.observe { update in
                first.append(update.new)
                if update.new == 1 { number.value = 2 }
            },
            number.observe { second.append($0.new) },
        ]
        number.value = 1
        #expect(first.all == [1, 2] && second.all == [1, 2])
        subscriptions.forEach { $0.cancel() }
    }
}
