import PropertyBased
@testable import Repository
import Testing

/// `ObserverList` without threads: changes and deliveries interleaved at random, as threads
/// taking the owner's lock would interleave them.
@Suite("Observer list")
struct ObserverListTests {
    /// What one random run saw go wrong.
    static func violations(_ steps: [Int]) -> [String] {
        var list = ObserverList<Int>()
        var problems: [String] = []
        var published: [Int] = []  // changes handed out or queued, in order
        var delivered: [Int] = []
        var deliverer: ObserverList<Int>.Delivery??  // the delivery a "thread" holds to run; .some(nil): it asks next()
        var observers = 0
        var observersAtChange: [Int: Int] = [:]  // a change goes to the observers there were when it was made
        func run(_ delivery: ObserverList<Int>.Delivery) {
            let (update, to) = (delivery.update, delivery.observers)
            if !update.isInitial {
                delivered.append(update.new)
                if to.count != observersAtChange[update.new] { problems.append("\(update.new) delivered to \(to.count) observers") }
            }
        }
        for (index, step) in steps.enumerated() {
            switch step % 4 {
            case 0, 1:  // a change
                let handedOut = list.publish({ Update(old: index - 1, new: index) })
                guard observers > 0 else {
                    if handedOut != nil { problems.append("a change with no observer was handed out") }
                    continue
                }
                published.append(index)
                observersAtChange[index] = observers
                if let handedOut {
                    if deliverer != nil { problems.append("handed out \(index) while another thread delivers") }
                    deliverer = .some(handedOut)
                } else if deliverer == nil {
                    problems.append("\(index) queued with nobody delivering")
                }
            case 2:  // the delivering thread takes its next step
                guard let holding = deliverer else { continue }
                if let delivery = holding {
                    run(delivery)
                    deliverer = .some(nil)
                } else if let next = list.next() {
                    deliverer = .some(next)
                } else {
                    deliverer = nil
                }
            default:  // another observer
                observers += 1
                if list.add(Observer { _ in }, initial: nil) != nil { problems.append("an observer without initial value was handed a delivery") }
            }
        }
        // The delivering thread finishes.
        while let holding = deliverer {
            if let delivery = holding { run(delivery); deliverer = .some(nil) } else { deliverer = list.next().map { .some($0) } }
        }
        if delivered != published { problems.append("delivered \(delivered), published \(published)") }
        if list.publish({ Update(old: 0, new: 0) }) == nil, observers > 0 { problems.append("still delivering after the queue emptied") }
        return problems
    }

    @Test("every change reaches the observers once, in order, one deliverer at a time", .shrinking)
    func interleavings() async {
        await propertyCheck(count: 1000, input: Gen.int(in: 0...99).array(of: 0...60)) { steps in
            let problems = Self.violations(steps)
            #expect(problems.isEmpty, "steps \(steps): \(problems)")
        }
    }

    @Test("a live query's own hand-over skips that query's member observers; with nobody left, no update is made")
    func handOverSkipsMembers() {
        final class Query {}
        let query = Query(), other = Query()
        var list = ObserverList<Int>()
        _ = list.add(Observer(member: ObjectIdentifier(query)) { _ in }, initial: nil)
        var made = 0
        #expect(list.publish({ made += 1; return Update(old: 0, new: 1) }, handingOver: ObjectIdentifier(query)) == nil)
        #expect(made == 0)

        let plain = Observer<Int> { _ in }
        _ = list.add(plain, initial: nil)
        _ = list.add(Observer(member: ObjectIdentifier(other)) { _ in }, initial: nil)
        guard let (update, recipients) = list.publish({ Update(old: 1, new: 2) }, handingOver: ObjectIdentifier(query)).map({ ($0.update, $0.observers) }) else {
            Issue.record("the other observers were not handed the update")
            return
        }
        #expect(update.new == 2 && recipients.count == 2 && !recipients.contains { $0.member == ObjectIdentifier(query) })
        _ = list.next()
        guard let everyone = list.publish({ Update(old: 2, new: 3) })?.observers else {
            Issue.record("an update outside a hand-over did not reach everyone")
            return
        }
        #expect(everyone.count == 3)
    }
}
