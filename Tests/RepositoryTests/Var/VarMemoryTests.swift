import Repository
import Testing

@Suite("Var memory")
struct VarMemoryTests {
    @Test("dropping a Var, its sub-references and subscriptions frees them")
    func released() {
        weak var root: Var<Person>?
        weak var name: Var<String>?
        weak var subscription: Subscription?
        do {
            let person = Var(makeBook()[0])
            let nameReference = person[\.name]
            let token = nameReference.observe { _ in _ = nameReference.value }  // captures its own Var
            nameReference.value = "Ada Lovelace"
            root = person
            name = nameReference
            subscription = token
        }
        #expect(root == nil)
        #expect(name == nil)
        #expect(subscription == nil)
    }

    @Test("a subscription alone keeps nothing alive once cancelled")
    func cancelledSubscriptionReleasesHandler() {
        final class Handler: Sendable {}
        weak var handler: Handler?
        let value = Var(0)
        var token: Subscription?
        do {
            let strong = Handler()
            handler = strong
            token = value.observe { _ in _ = strong }
        }
        #expect(handler != nil)
        token?.cancel()
        #expect(handler == nil)
        _ = token
    }
}
