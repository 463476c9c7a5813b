import PropertyBased
@testable import Repository
import Testing

/// `PipelineQueue` without a database: statements arriving and batches finishing in random
/// order, as tasks taking the pool's lock would interleave them.
@Suite("Pipeline queue")
struct PipelineQueueTests {
    /// What one random run saw go wrong. Even steps: a statement arrives; odd: one of the
    /// batches under way (picked by the step) finishes.
    static func violations(_ steps: [Int], lanes: Int, maximumBatch: Int) -> [String] {
        var queue = PipelineQueue<Int>(lanes: lanes, maximumBatch: maximumBatch)
        var problems: [String] = []
        var underWay: [[Int]] = []  // the batches being sent, one per busy lane
        var handedOut: [Int] = []   // statements in the order their batches were handed out
        var arrived: [Int] = []
        func finish(_ lane: Int) {
            guard !underWay.isEmpty else { return }
            underWay.remove(at: lane % underWay.count)
            if let next = queue.batchDone() {
                if next.isEmpty || next.count > maximumBatch { problems.append("a batch of \(next.count)") }
                underWay.append(next)
                handedOut += next
            } else if !queue.waiting.isEmpty {
                problems.append("a lane freed with statements waiting: \(queue.waiting)")
            }
        }
        for (index, step) in steps.enumerated() {
            if step % 2 == 0 {
                arrived.append(index)
                if queue.arrive(index) {
                    if underWay.count >= lanes { problems.append("\(index) sent alone with every lane busy") }
                    underWay.append([index])
                    handedOut.append(index)
                } else if underWay.count < lanes {
                    problems.append("\(index) queued with a lane free")
                }
            } else {
                finish(step / 2)
            }
            if queue.underWay != underWay.count { problems.append("\(queue.underWay) under way, \(underWay.count) in fact") }
        }
        while !underWay.isEmpty { finish(0) }
        if handedOut != arrived { problems.append("handed out \(handedOut), arrived \(arrived)") }
        if queue.underWay != 0 { problems.append("\(queue.underWay) still under way") }
        return problems
    }

    @Test("every statement is sent once, batches handed out in arrival order, never more than the lanes; none stranded", .shrinking)
    func interleavings() async {
        await propertyCheck(count: 1000, input: Gen.int(in: 0...99).array(of: 0...80), Gen.int(in: 1...3), Gen.int(in: 1...5)) { steps, lanes, maximum in
            let problems = Self.violations(steps, lanes: lanes, maximumBatch: maximum)
            #expect(problems.isEmpty, "steps \(steps) lanes \(lanes) maximum \(maximum): \(problems)")
        }
    }

    @Test("a statement finding a lane free goes at once, alone")
    func alone() {
        var queue = PipelineQueue<Int>(lanes: 2, maximumBatch: 8)
        let first = queue.sendsAlone(), second = queue.sendsAlone(), third = queue.sendsAlone()
        let next = queue.batchDone()
        let fourth = queue.sendsAlone()
        #expect(first && second && !third && next == nil && fourth)
    }
}
