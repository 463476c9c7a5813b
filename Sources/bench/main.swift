// `swift run -c release bench [--json] [--handles N] [--iterations N] [--writers N] [--queries N]`
// Measures the library beside raw libpq on the same server in one run, and reports ratios.
import Foundation
import Repository

let arguments = CommandLine.arguments
func option(_ name: String, default value: Int) -> Int {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count, let parsed = Int(arguments[index + 1]) else { return value }
    return parsed
}
let json = arguments.contains("--json")
let maximumHandles = option("--handles", default: 100_000)
let iterations = option("--iterations", default: 1000)
/// `--only read` (floor, query, read — with read-on-executor —, read-on-executor, propagation, fan-out, live-query, many-queries, routing, decode, var, burst, resync, replication, write-through, writers, bulk, triggers, migrations) runs
/// that case alone, for working on it; several, comma-separated (`--only burst,replication`), run in one go.
let only = arguments.firstIndex(of: "--only").flatMap { $0 + 1 < arguments.count ? Set(arguments[$0 + 1].split(separator: ",").map(String.init)) : nil }
func runs(_ name: String) -> Bool { only?.contains(name) ?? true }

func log(_ line: String) { FileHandle.standardError.write(Data((line + "\n").utf8)) }

do {
    log("Setting up \(maximumHandles) rows…")
    let environment = try await BenchEnvironment.make(rows: max(maximumHandles, 10_000))
    let cases = Cases(environment: environment, iterations: iterations)
    var results: [BenchResult] = []
    if runs("floor") { log("floor…"); results.append(await cases.hopFloor()) }
    if runs("query") { log("query…"); results.append(try await cases.query()) }
    if runs("read") { log("read…"); results.append(try await cases.read()) }
    if runs("read") || runs("read-on-executor") { log("read on the executor…"); results.append(try await cases.readOnExecutor()) }
    var propagationBudget: Double?
    if runs("propagation") || runs("replication") {
        log("propagation…")
        let (propagation, triggerPath) = try await cases.propagation()
        propagationBudget = propagation.baseline
        results.append(propagation)
        results.append(BenchResult(name: "UPDATE -> NOTIFY (raw)", unit: "us", library: triggerPath.p50, libraryP99: triggerPath.p99,
                                   baseline: propagation.baseline, baselineP99: propagation.baselineP99,
                                   ratio: triggerPath.p50 / propagation.baseline, target: "(informative)", met: true,
                                   note: "a raw listener's wake-up for the same UPDATE through the announcement triggers"))
    }
    if runs("fan-out") { log("fan-out…"); results += try await cases.fanOut(maximum: maximumHandles) }
    if runs("live-query") { log("live query…"); results.append(try await cases.liveQuery()) }
    if runs("many-queries") { log("many live queries…"); results += try await cases.manyQueries(count: option("--queries", default: 10_000)) }
    if runs("many-queries") || runs("routing") { log("matching alone…"); results += try await cases.routing(count: option("--queries", default: 10_000)) }
    if runs("decode") { log("decoding…"); results += try await cases.decoding() }
    if runs("var") { log("observing a Var…"); results.append(cases.observing()) }
    if runs("burst") { log("burst…"); results.append(try await cases.burst()) }
    if runs("resync") { log("resync after a reconnection…"); results.append(try await cases.resync()) }
    if runs("write-through") { log("write-through…"); results.append(try await cases.writeThrough()) }
    if runs("writers") { log("concurrent writers…"); results.append(try await cases.concurrentWriters(writers: option("--writers", default: 8))) }
    if runs("bulk") { log("bulk update under a live query…"); results.append(try await cases.bulkUnderLiveQuery()) }
    if runs("triggers") { log("trigger overhead…"); results.append(try await cases.triggerOverhead()) }
    if runs("replication"), let propagationBudget {
        log("through logical replication…")
        results += try await cases.replication(budget: propagationBudget)
    }
    if runs("migrations") { log("migrations…"); results += try await cases.migrations() }
    try await environment.tearDown()
    print(json ? try Report.json(results, machine: Report.machine) : Report.table(results, machine: Report.machine))
} catch {
    log("bench failed: \(error)")
    exit(1)
}
