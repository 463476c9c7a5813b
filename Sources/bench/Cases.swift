import Foundation
import Repository

/// The cases of the benchmark, each beside its raw libpq baseline.
struct Cases {
    let environment: BenchEnvironment
    let iterations: Int
    /// Where the repositories of the propagation, burst and bulk cases learn of changes.
    var source: ChangeSource = .notifications

    /// A repository over the bench database, following ``source``.
    func makeRepository() -> LiveRepository {
        LiveRepository(environment.database, changes: source)
    }

    /// `read(id:)` — fetch, decode, handle — against `PQexecPrepared` of the same SELECT,
    /// measured alternately.
    func read() async throws -> BenchResult {
        let raw = try RawPostgres(environment.conninfo)
        try raw.prepare("read", "SELECT * FROM bench_rows WHERE id = $1")
        let repository = LiveRepository(environment.database)
        defer { repository.close() }
        var id = 0
        let (baseline, library) = try await measureInterleaved(iterations) {
            id = id % environment.rows + 1
            raw.executePrepared("read", [String(id)])
        } library: {
            _ = try await repository.read(BenchRow.self, id: Int64(id))  // released at once: the next read fetches
        }
        return result("read", library, baseline, target: "p50 ratio <= 1.25") { $0 <= 1.25 }
    }

    /// `read(id:)` as in ``read()``, with the task preferring the database's executor (the
    /// poller's thread), the raw calls too: informative, since the raw calls then block the
    /// thread the library's answers arrive on.
    func readOnExecutor() async throws -> BenchResult {
        let row = try await withTaskExecutorPreference(environment.database.executor) { try await read() }
        return BenchResult(name: "read on database.executor", unit: row.unit, library: row.library, libraryP99: row.libraryP99,
                           baseline: row.baseline, baselineP99: row.baselineP99, ratio: row.ratio, target: "(informative)",
                           met: true, note: "as read, in a task that prefers Database.executor: answers resume it with no thread hop")
    }

    /// `Database.query` of the same SELECT, decoded: what the pool and thread hops cost alone.
    func query() async throws -> BenchResult {
        let raw = try RawPostgres(environment.conninfo)
        try raw.prepare("read", "SELECT * FROM bench_rows WHERE id = $1")
        let (baseline, library) = try await measureInterleaved(iterations) {
            raw.executePrepared("read", ["1"])
        } library: {
            _ = try await environment.database.query("SELECT * FROM bench_rows WHERE id = $1", [1]).decode(BenchRow.self)
        }
        return result("query (Database.query + decode)", library, baseline, target: "(informative)") { _ in true }
    }

    /// An UPDATE committed by another connection until the observer runs, against a bare
    /// NOTIFY's wake-up and a bare SELECT; also returns the raw UPDATE-to-NOTIFY time.
    func propagation() async throws -> (BenchResult, triggerPath: Samples) {
        var triggerPath = Samples()
        let writer = try RawPostgres(environment.conninfo)
        let listener = try RawPostgres(environment.conninfo)
        try listener.execute("LISTEN bench_raw")
        let notify = try await measure(iterations) {
            try writer.execute("NOTIFY bench_raw")
            _ = listener.waitForNotification()
        }
        try writer.prepare("select", "SELECT * FROM bench_rows WHERE id = $1")
        let select = await measure(iterations) { writer.executePrepared("select", ["1"]) }
        let library = try await observedChange(handles: 1, writer: writer)
        // The same UPDATE through the same triggers, up to a raw listener's wake-up: the part
        // of the library's time that is the database's, not the library's.
        let triggerListener = try RawPostgres(environment.conninfo)
        try triggerListener.execute("LISTEN live_changes")
        var n = 0
        let triggered = await measure(iterations) {
            n += 1
            try? writer.execute("UPDATE bench_rows SET n = \(n) WHERE id = 2")
            _ = triggerListener.waitForNotification()
        }
        triggerPath = triggered
        // What is physically there: the UPDATE through the triggers to a listener's wake-up,
        // then one prepared SELECT of the row.
        let budget = triggered.p50 + select.p50
        let ratio = library.p50 / budget
        let row = BenchResult(name: "propagation", unit: "us", library: library.p50, libraryP99: library.p99, baseline: budget,
                              baselineP99: nil, ratio: ratio, target: "p50 ratio <= 1.3", met: ratio <= 1.3,
                              note: String(format: "budget %.1f us = UPDATE through the triggers to a raw listener p50 %.1f + prepared SELECT p50 %.1f (bare NOTIFY p50 %.1f)",
                                           budget, triggered.p50, select.p50, notify.p50))
        return (row, triggerPath)
    }

    /// Time from a committed UPDATE of row 1 to its observer, with `handles` rows live.
    func observedChange(handles: Int, writer: RawPostgres, repository existing: LiveRepository? = nil) async throws -> Samples {
        let repository = existing ?? makeRepository()
        defer { if existing == nil { repository.close() } }
        let signal = UpdateSignal()
        let handle = try await repository.read(BenchRow.self, id: 1)
        let subscription = handle[\.n].observe { _ in signal.fire() }
        defer { subscription.cancel() }
        var value = handle.value.n
        return try await measure(iterations, warmUp: 20) {
            value += 1
            try await signal.wait { try writer.execute("UPDATE bench_rows SET n = \(value) WHERE id = 1") }
        }
    }

    /// The cost of one change with 1, 1,000 and `maximum` handles live, and memory per handle.
    func fanOut(maximum: Int) async throws -> [BenchResult] {
        let writer = try RawPostgres(environment.conninfo)
        let repository = LiveRepository(environment.database)
        defer { repository.close() }
        var handles: [Var<BenchRow>] = []
        var costs: [Int: Samples] = [:]
        var memoryPerHandle = 0.0
        for count in [1, 1000, maximum] {
            let before = residentMemory()
            for id in handles.count..<count { handles.append(try await repository.read(BenchRow.self, id: Int64(id + 1))) }
            if count == maximum, count > 1000 {
                memoryPerHandle = Double(residentMemory() - before) / Double(count - 1000)
            }
            costs[count] = try await observedChange(handles: count, writer: writer, repository: repository)
        }
        let one = costs[1]!, many = costs[maximum]!
        return [
            result("fan-out \(maximum) vs 1", many, one, target: "p50 ratio <= 1.2") { $0 <= 1.2 },
            BenchResult(name: "fan-out 1000 vs 1", unit: "us", library: costs[1000]!.p50, libraryP99: costs[1000]!.p99,
                        baseline: one.p50, baselineP99: one.p99, ratio: costs[1000]!.p50 / one.p50, target: "(informative)",
                        met: true, note: ""),
            BenchResult(name: "memory per idle handle", unit: "bytes", library: memoryPerHandle, libraryP99: nil,
                        baseline: 2048, baselineP99: nil, ratio: memoryPerHandle / 2048, target: "<= 2048 bytes",
                        met: memoryPerHandle <= 2048, note: "resident memory growth over \(maximum - 1000) handles"),
        ]
    }

    /// 10,000 rows changed in one transaction until every handle converged, against one raw
    /// batched SELECT of those rows. `BURST_ROUNDS` (default 5) sets how many bursts are timed,
    /// more for profiling.
    func burst(rows: Int = 10_000) async throws -> BenchResult {
        let raw = try RawPostgres(environment.conninfo)
        try raw.prepare("batch", "SELECT * FROM bench_rows WHERE id = ANY($1::bigint[])")
        let ids = "{" + (1...rows).map(String.init).joined(separator: ",") + "}"
        let baseline = await measure(20, warmUp: 3) { raw.executePrepared("batch", [ids]) }

        let repository = makeRepository()
        defer { repository.close() }
        var handles: [Var<BenchRow>] = []
        for id in 1...rows { handles.append(try await repository.read(BenchRow.self, id: Int64(id))) }
        let seen = LockedBox(0)
        let signal = UpdateSignal()
        let subscriptions = handles.map { handle in
            handle[\.n].observe { _ in if seen.update({ $0 += 1; return $0 }) == rows { signal.fire() } }
        }
        defer { subscriptions.forEach { $0.cancel() } }
        var library = Samples()
        var updates = Samples()
        var cpu = Samples()
        let before = repository.rowQueries
        let rounds = ProcessInfo.processInfo.environment["BURST_ROUNDS"].flatMap(Int.init).map { max(1, $0) } ?? 5
        // A mark for profiling the rounds alone.
        log("burst through \(source == .notifications() ? "notifications" : "replication"): \(rounds) rounds…")
        for round in 1...rounds {
            seen.update { $0 = 0 }
            var committed = ContinuousClock.now
            let cpuBefore = processCPUTime()
            try await signal.wait {
                let start = ContinuousClock.now
                try raw.execute("UPDATE bench_rows SET n = n + 1000 + \(round) WHERE id <= \(rows)")
                committed = ContinuousClock.now
                updates.add(committed - start)
            }
            library.add(ContinuousClock.now - committed)
            cpu.add(processCPUTime() - cpuBefore)
        }
        let queries = (repository.rowQueries - before) / rounds
        var row = result("burst \(rows) rows", library, baseline, target: "p50 ratio <= 2") { $0 <= 2 }
        row = BenchResult(name: row.name, unit: row.unit, library: row.library, libraryP99: row.libraryP99, baseline: row.baseline,
                          baselineP99: row.baselineP99, ratio: row.ratio, target: row.target, met: row.met,
                          note: String(format: "measured from the commit; %d refetch queries per burst; the UPDATE itself took p50 %.0f us more; CPU in this process p50 %.0f us (%.1f us per row)", queries, updates.p50, cpu.p50, cpu.p50 / Double(rows)))
        return row
    }

    /// Durable sets per second through a handle (set, then save) against a raw UPDATE loop.
    func writeThrough() async throws -> BenchResult {
        let raw = try RawPostgres(environment.conninfo)
        try raw.prepare("update", "UPDATE bench_rows SET name = $1 WHERE id = $2")
        let repository = LiveRepository(environment.database)
        defer { repository.close() }
        let handle = try await repository.read(BenchRow.self, id: 3)
        let readsBefore = repository.rowQueries
        var counter = 0
        // Alternately, so that both see the same machine: the raw rate alone moves 2-3x between runs here.
        let (baseline, library) = try await measureInterleaved(iterations) {
            raw.executePrepared("update", ["raw", "2"])
        } library: {
            counter += 1
            handle[\.name].value = "set \(counter)"
            try await handle.save()
        }
        // CPU and waits in this process per set, library alone (the feed's thread hearing of
        // each write included), and the CPU and waits of raw UPDATEs alone.
        log("write-through: CPU per set…")
        let (cpuStart, waitsStart) = (processCPUTime(), processWaits())
        // `WRITE_SETS` (default 200) sets how many, more for profiling between this mark and the next.
        let sets = ProcessInfo.processInfo.environment["WRITE_SETS"].flatMap(Int.init).map { max(1, $0) } ?? 200
        for _ in 0..<sets {
            counter += 1
            handle[\.name].value = "set \(counter)"
            try await handle.save()
        }
        let cpuPerSet = (processCPUTime() - cpuStart).seconds * 1e6 / Double(sets)
        let waitsPerSet = Double(processWaits() - waitsStart) / Double(sets)
        log("write-through: raw CPU…")
        let (rawCPUStart, rawWaitsStart) = (processCPUTime(), processWaits())
        for _ in 0..<200 { raw.executePrepared("update", ["raw", "2"]) }
        let rawCPU = (processCPUTime() - rawCPUStart).seconds * 1e6 / 200
        let rawWaits = Double(processWaits() - rawWaitsStart) / 200
        // Where the gap is: the same kind of UPDATE … RETURNING through the pool (its round
        // trip and hops alone), between a raw one and a set, three ways interleaved.
        var pooled = Samples(), rawAgain = Samples(), setAgain = Samples()
        let clock = ContinuousClock()
        for round in 0..<(iterations / 2) {
            var start = clock.now
            raw.executePrepared("update", ["raw", "2"])
            rawAgain.add(clock.now - start)
            start = clock.now
            _ = try await environment.database.query("UPDATE bench_rows SET name = $1 WHERE id = $2 RETURNING *, xmin", ["pooled \(round)", Int64(4)])
            pooled.add(clock.now - start)
            start = clock.now
            counter += 1
            handle[\.name].value = "set \(counter)"
            try await handle.save()
            setAgain.add(clock.now - start)
        }
        let libraryRate = 1e6 / library.p50, rawRate = 1e6 / baseline.p50
        return BenchResult(name: "write-through", unit: "sets/s", library: libraryRate, libraryP99: nil, baseline: rawRate,
                           baselineP99: nil, ratio: libraryRate / rawRate, target: "rate ratio >= 0.8",
                           met: libraryRate / rawRate >= 0.8,
                           note: String(format: "per durable set: library p50 %.1f us, p99 %.1f us; raw p50 %.1f us, p99 %.1f us; CPU in this process %.1f us and %.1f waits of its threads (raw UPDATE: %.1f us and %.1f waits, the feed hearing of it included); %.2f re-reads per set; "
                                        + "three ways interleaved: raw UPDATE p50 %.1f us, the same through Database.query with RETURNING p50 %.1f us, a set and save() p50 %.1f us",
                                        library.p50, library.p99, baseline.p50, baseline.p99, cpuPerSet, waitsPerSet, rawCPU, rawWaits,
                                        Double(repository.rowQueries - readsBefore) / Double(max(counter, 1)), rawAgain.p50, pooled.p50, setAgain.p50))
    }

    private func result(_ name: String, _ library: Samples, _ baseline: Samples, target: String, met: (Double) -> Bool) -> BenchResult {
        let ratio = library.p50 / baseline.p50
        return BenchResult(name: name, unit: "us", library: library.p50, libraryP99: library.p99, baseline: baseline.p50,
                           baselineP99: baseline.p99, ratio: ratio, target: target, met: met(ratio), note: "")
    }
}
