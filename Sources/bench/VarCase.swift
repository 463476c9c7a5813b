import Foundation
import Repository

extension Cases {
    /// A plain `Var` set, heard by two key-path observers (`row[\.n]`, which hears it, and
    /// `row[\.name]`, which does not), against the same written by hand: a locked value whose
    /// setter compares each observed property and calls its handler. CPU time per set, median
    /// of 5; informative. No database: what every observer of a part costs, live or not.
    func observing() -> BenchResult {
        let sets = 100_000
        /// CPU microseconds per set of `set(i)` for i in 1...sets.
        func perSet(_ set: (Int64) -> Void) -> Double {
            let start = processCPUTime()
            for i in 1...sets { set(Int64(i)) }
            return (processCPUTime() - start).seconds * 1e6 / Double(sets)
        }
        let heard = HeardCount()
        let row = Var(BenchRow(id: 1, name: "name", n: 0))
        let subscriptions = [row[\.n].observe { _ in heard.add() }, row[\.name].observe { _ in heard.add() }]
        let byHand = ObservedByHand(BenchRow(id: 1, name: "name", n: 0), n: { _, _ in heard.add() }, name: { _, _ in heard.add() })
        var library: [Double] = [], raw: [Double] = []
        for pass in 0..<6 {
            let (viaVar, viaHand) = (perSet { row.value.n = $0 &* 2 &+ Int64(pass & 1) }, perSet { byHand.setN($0 &* 2 &+ Int64(pass & 1)) })
            guard pass > 0 else { continue }  // warm-up
            (library, raw) = (library + [viaVar], raw + [viaHand])
        }
        withExtendedLifetime(subscriptions) {}
        precondition(heard.count == 2 * 6 * sets, "every set is heard once, by the observer of n")
        let (var50, hand50) = (Samples(library).p50, Samples(raw).p50)
        return BenchResult(name: "set a Var, 2 key-path observers", unit: "us", library: var50, libraryP99: nil, baseline: hand50,
                           baselineP99: nil, ratio: var50 / hand50, target: "(informative)", met: true,
                           note: "CPU per set in this process, median of 5: row.value.n = … heard by row[\\.n] (and not by row[\\.name]) against a locked value whose setter compares each observed property by hand")
    }
}

/// How many updates the observers heard.
private final class HeardCount: @unchecked Sendable {
    // @unchecked: `heard` is only touched under `lock`.
    private let lock = NSLock()
    private var heard = 0
    var count: Int { lock.withLock { heard } }
    func add() { lock.withLock { heard += 1 } }
}

/// What a program without `Var` writes to hear changes of two properties: a value behind a
/// lock, and a setter that compares each observed property and calls its handler after the lock.
private final class ObservedByHand: @unchecked Sendable {
    // @unchecked: `row` is only touched under `lock`; the handlers are immutable.
    private let lock = NSLock()
    private var row: BenchRow
    private let onN: @Sendable (Int64, Int64) -> Void
    private let onName: @Sendable (String, String) -> Void

    init(_ row: BenchRow, n: @escaping @Sendable (Int64, Int64) -> Void, name: @escaping @Sendable (String, String) -> Void) {
        (self.row, onN, onName) = (row, n, name)
    }

    func setN(_ n: Int64) {
        let (old, new) = lock.withLock {
            let old = row
            row.n = n
            return (old, row)
        }
        if old.n != new.n { onN(old.n, new.n) }
        if old.name != new.name { onName(old.name, new.name) }
    }
}
