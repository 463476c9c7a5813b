// `swift run -c release bench [--json] [--handles N] [--iterations N]`
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
/// `--only live-query` runs that case alone (for working on it).
let only = arguments.firstIndex(of: "--only").flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }

func log(_ line: String) { FileHandle.standardError.write(Data((line + "\n").utf8)) }

do {
    log("Setting up \(maximumHandles) rows…")
    let environment = try await BenchEnvironment.make(rows: max(maximumHandles, 10_000))
    let cases = Cases(environment: environment, iterations: iterations)
    var results: [BenchResult] = []
    if only == "live-query" {
        results.append(try await cases.liveQuery())
        try await environment.tearDown()
        print(Report.table(results, machine: Report.machine))
        exit(0)
    }
    log("query…");         results.append(try await cases.query())
    log("read…");          results.append(try await cases.read())
    log("propagation…")
    let (propagation, triggerPath) = try await cases.propagation()
    results.append(propagation)
    results.append(BenchResult(name: "UPDATE -> NOTIFY (raw)", unit: "us", library: triggerPath.p50, libraryP99: triggerPath.p99,
                               baseline: propagation.baseline, baselineP99: propagation.baselineP99,
                               ratio: triggerPath.p50 / propagation.baseline, target: "(informative)", met: true,
                               note: "a raw listener's wake-up for the same UPDATE through the version and notify triggers"))
    log("fan-out…");       results += try await cases.fanOut(maximum: maximumHandles)
    log("live query…");    results.append(try await cases.liveQuery())
    log("burst…");         results.append(try await cases.burst())
    log("write-through…"); results.append(try await cases.writeThrough())
    try await environment.tearDown()
    print(json ? try Report.json(results, machine: Report.machine) : Report.table(results, machine: Report.machine))
} catch {
    log("bench failed: \(error)")
    exit(1)
}
