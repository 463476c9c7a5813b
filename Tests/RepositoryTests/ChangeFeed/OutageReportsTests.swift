@testable import Repository
import Testing

/// Which failures of an outage the change feed reports: ``OutageReports``, without a server.
@Suite("Outage reports")
struct OutageReportsTests {
    /// The failures reported when an attempt fails every 10 s, as `failures` says.
    func reports(_ failures: [String]) -> [Int] {
        var outage = OutageReports(persisting: .seconds(30))
        let start = ContinuousClock.now
        return failures.indices.filter { outage.failed(failures[$0], at: start + .seconds(10 * $0)) }
    }

    @Test("the first failure at once; a restart's steps (refused, then starting up) are not reported; a new failure that lasts — a gone slot, a login refused since — is, once; listening ends the outage")
    func examples() {
        #expect(reports(["lost", "refused", "refused", "starting", "starting"]) == [0])
        #expect(reports(["lost", "no slot", "no slot", "no slot", "no slot", "no slot"]) == [0, 4])
        #expect(reports(["refused login", "refused login", "refused login", "refused login"]) == [0])
        var outage = OutageReports()
        let (first, again) = (outage.failed("lost"), outage.failed("lost"))
        #expect(first && !again && outage.isInOutage)
        let (ended, endedAgain) = (outage.listens(), outage.listens())
        #expect(ended && !endedAgain && !outage.isInOutage)
        let afterwards = outage.failed("lost")
        #expect(afterwards)
    }

    @Test("every sequence of up to 8 failures of 3 kinds, 10 s apart: the first is reported; no failure twice; a later one only once it has lasted 30 s, and every failure that lasts 30 s is reported")
    func exhaustive() {
        let kinds = ["a", "b", "c"]
        var checked = 0
        for length in 1...8 {
            var sequence = [String](repeating: "a", count: length)
            for code in 0..<(0..<length).reduce(1, { product, _ in product * 3 }) {
                var rest = code
                for index in 0..<length { (sequence[index], rest) = (kinds[rest % 3], rest / 3) }
                let reported = reports(sequence)
                /// Whether the failure at `index` is the fourth in a row of its kind (30 s).
                func lasted(_ index: Int) -> Bool { index >= 3 && sequence[(index - 3)...index].allSatisfy { $0 == sequence[index] } }
                #expect(reported.first == 0)
                #expect(Set(reported.map { sequence[$0] }).count == reported.count, "\(sequence): \(reported)")
                for index in reported.dropFirst() { #expect(lasted(index), "\(sequence): \(reported)") }
                for index in sequence.indices where lasted(index) {
                    #expect(reported.contains { sequence[$0] == sequence[index] && $0 <= index }, "\(sequence): \(reported)")
                }
                checked += 1
            }
        }
        #expect(checked == 9840)
    }
}
