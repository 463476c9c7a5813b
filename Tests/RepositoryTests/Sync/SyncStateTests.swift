import Foundation
import PropertyBased
@testable import Repository
import Testing

/// The sync state machine without a database: every interleaving of a small event alphabet,
/// and long random sequences, checked against the contract (see ``SyncSimulation``).
@Suite("Sync state machine")
struct SyncStateTests {
    static let events = SyncSimulation.Event.allCases

    /// Runs `codes` (an event and a value each) and settles; the violations found.
    static func run(_ codes: [Int], policy: ConflictPolicy, streams: Bool = false) -> [String] {
        var simulation = SyncSimulation(policy: policy, streams: streams)
        for code in codes {
            simulation.step(events[code % events.count], value: code / events.count % 3)
        }
        simulation.settle()
        if !simulation.violations.isEmpty, ProcessInfo.processInfo.environment["SYNC_TRACE"] != nil {
            print(simulation.trace.joined(separator: "\n"))
        }
        return simulation.violations
    }

    @Test("every sequence of up to 5 events, both policies, changes announced or streamed with their rows",
          arguments: [ConflictPolicy.databaseWins, .localWins], [false, true])
    func exhaustive(policy: ConflictPolicy, streams: Bool) async {
        // Values are fixed per event (1 for edits, 2 for the other writer) so the alphabet stays small.
        let alphabet = Self.events.indices.map { $0 + Self.events.count * ($0 < 2 ? 1 : 2) }
        var sequences: [[Int]] = [[]]
        var checked = 0
        for _ in 1...5 {
            sequences = sequences.flatMap { prefix in alphabet.map { prefix + [$0] } }
            for sequence in sequences {
                checked += 1
                // A minute of CPU: the pool's other tests get their turn (see `ChildProcess.completion()`).
                if checked % 1000 == 0 { await Task.yield() }
                let violations = Self.run(sequence, policy: policy, streams: streams)
                if !violations.isEmpty {
                    Issue.record("\(sequence.map { Self.events[$0 % Self.events.count] }): \(violations)")
                    return
                }
            }
        }
        #expect(checked == (1...5).reduce(0) { total, length in total + (0..<length).reduce(1) { product, _ in product * alphabet.count } })
    }

    /// `SYNC_PROPERTY_RUNS` raises the count for a longer search.
    static let randomRuns = ProcessInfo.processInfo.environment["SYNC_PROPERTY_RUNS"].flatMap(Int.init) ?? 3000

    @Test("a sequence given in SYNC_CODES, traced", .enabled(if: ProcessInfo.processInfo.environment["SYNC_CODES"] != nil))
    func replay() {
        let codes = (ProcessInfo.processInfo.environment["SYNC_CODES"] ?? "").split(separator: ",").compactMap { Int($0) }
        let localWins = ProcessInfo.processInfo.environment["SYNC_LOCAL_WINS"] != nil
        let streams = ProcessInfo.processInfo.environment["SYNC_STREAMS"] != nil
        #expect(Self.run(codes, policy: localWins ? .localWins : .databaseWins, streams: streams).isEmpty)
    }

    @Test("long random sequences, both policies, changes announced or streamed with their rows", .shrinking)
    func random() async {
        await propertyCheck(count: Self.randomRuns, input: Gen.int(in: 0...999).array(of: 1...80), Gen.bool, Gen.bool) { codes, localWins, streams in
            await Task.yield()  // as in `exhaustive`
            let violations = Self.run(codes, policy: localWins ? .localWins : .databaseWins, streams: streams)
            #expect(violations.isEmpty, "\(codes.map { Self.events[$0 % Self.events.count] }) codes \(codes) localWins \(localWins) streams \(streams): \(violations)")
        }
    }
}
