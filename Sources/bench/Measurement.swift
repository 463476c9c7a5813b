import Foundation

/// Durations of repeated runs, in microseconds.
struct Samples {
    private(set) var values: [Double] = []

    init(_ values: [Double] = []) { self.values = values }

    mutating func add(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        values.append(Double(seconds) * 1e6 + Double(attoseconds) / 1e12)
    }

    func percentile(_ p: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.down)))]
    }

    var p50: Double { percentile(0.50) }
    var p99: Double { percentile(0.99) }
}

/// Times `body` `count` times after `warmUp` untimed runs.
func measure(_ count: Int, warmUp: Int = 50, _ body: () async throws -> Void) async rethrows -> Samples {
    for _ in 0..<warmUp { try await body() }
    var samples = Samples()
    let clock = ContinuousClock()
    for _ in 0..<count {
        let start = clock.now
        try await body()
        samples.add(clock.now - start)
    }
    return samples
}

/// Times `raw` and `library` alternately, `count` times each, so both see the same machine
/// conditions — on a shared, noisy machine, separate blocks drift apart.
func measureInterleaved(_ count: Int, warmUp: Int = 50, raw: () throws -> Void,
                        library: () async throws -> Void) async rethrows -> (raw: Samples, library: Samples) {
    for _ in 0..<warmUp {
        try raw()
        try await library()
    }
    var rawSamples = Samples(), librarySamples = Samples()
    let clock = ContinuousClock()
    for _ in 0..<count {
        var start = clock.now
        try raw()
        rawSamples.add(clock.now - start)
        start = clock.now
        try await library()
        librarySamples.add(clock.now - start)
    }
    return (rawSamples, librarySamples)
}

/// One line of the report: the library beside the raw libpq baseline.
struct BenchResult: Encodable {
    let name: String
    let unit: String
    let library: Double
    let libraryP99: Double?
    let baseline: Double
    let baselineP99: Double?
    let ratio: Double
    let target: String
    let met: Bool
    let note: String
}

enum Report {
    static func table(_ results: [BenchResult], machine: String) -> String {
        func format(_ value: Double?) -> String { value.map { String(format: "%.1f", $0) } ?? "-" }
        let header = ["case", "unit", "library p50", "p99", "raw p50", "p99", "ratio", "target", "met"]
        let rows = results.map {
            [$0.name, $0.unit, format($0.library), format($0.libraryP99), format($0.baseline), format($0.baselineP99),
             String(format: "%.2f", $0.ratio), $0.target, $0.met ? "yes" : "NO"]
        }
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        var lines = all.map { row in
            zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
        }
        lines.insert(String(repeating: "-", count: lines[0].count), at: 1)
        lines.append("")
        lines += results.filter { !$0.note.isEmpty }.map { "\($0.name): \($0.note)" }
        lines.append("machine: \(machine)")
        return lines.joined(separator: "\n")
    }

    static func json(_ results: [BenchResult], machine: String) throws -> String {
        struct Document: Encodable { let machine: String; let results: [BenchResult] }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try encoder.encode(Document(machine: machine, results: results)), as: UTF8.self)
    }

    /// CPU model, core count and memory, from /proc where available.
    static var machine: String {
        let cpu = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("model name") }?
            .split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
        let memory = ProcessInfo.processInfo.physicalMemory / 1_073_741_824
        return "\(cpu), \(ProcessInfo.processInfo.activeProcessorCount) cores, \(memory) GiB"
    }
}

/// Resident memory of this process, in bytes.
func residentMemory() -> Int {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
          let pages = statm.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
    else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// CPU time this process has used so far, on all its threads: what a case costs here,
/// steadier on a shared machine than the time it takes (the server's work is not in it).
func processCPUTime() -> Duration {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
}

/// Times a thread of this process gave up its processor to wait (voluntary context switches,
/// all threads so far): each is a wake-up to come, which on a virtual machine costs more than
/// the work around it.
func processWaits() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_nvcsw
}
