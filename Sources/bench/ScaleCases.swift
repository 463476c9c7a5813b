import Foundation
import Repository

extension Cases {
    /// What the triggers cost the writer: an UPDATE of 10,000 rows on a table with the
    /// announcement triggers, against the same UPDATE on a copy without them.
    func triggerOverhead(name: String = "UPDATE 10000 rows, triggers", target: Double = 1.5,
                         note: String = "the same UPDATE on a copy of the table without the announcement triggers") async throws -> BenchResult {
        let writer = try RawPostgres(environment.conninfo)
        try writer.execute("""
            DROP TABLE IF EXISTS bench_plain;
            CREATE TABLE bench_plain (LIKE bench_rows INCLUDING ALL); INSERT INTO bench_plain SELECT * FROM bench_rows
            """)
        try writer.execute("VACUUM ANALYZE bench_plain, bench_rows")
        // Interleaved, so that both tables see the same load and the same bloat.
        var samples: [String: Samples] = [:]
        let runs = max(iterations / 50, 20)
        for run in 0..<(runs + 3) {
            for table in ["bench_plain", "bench_rows"] {
                let start = ContinuousClock.now
                try writer.execute("UPDATE \(table) SET n = \(run) WHERE id <= 10000")
                if run >= 3 { samples[table, default: Samples()].add(ContinuousClock.now - start) }
            }
        }
        let plain = samples["bench_plain"]!, triggered = samples["bench_rows"]!
        let ratio = triggered.p50 / plain.p50
        return BenchResult(name: name, unit: "us", library: triggered.p50, libraryP99: triggered.p99,
                           baseline: plain.p50, baselineP99: plain.p99, ratio: ratio, target: "p50 ratio <= \(target)", met: ratio <= target,
                           note: note)
    }

    /// A 5,000-row UPDATE under a 10,000-row live query, until the query's observer has the
    /// final list, against re-running the query raw. `BULK_ROWS` (default 5,000) sets how many
    /// rows the UPDATE changes, `BULK_ROUNDS` (default by the iterations) how many are timed.
    func bulkUnderLiveQuery() async throws -> BenchResult {
        let settings = ProcessInfo.processInfo.environment
        let updated = settings["BULK_ROWS"].flatMap(Int.init).map { min(max(1, $0), 10_000) } ?? 5_000
        let rounds = settings["BULK_ROUNDS"].flatMap(Int.init).map { max(1, $0) } ?? max(iterations / 50, 10)
        let writer = try RawPostgres(environment.conninfo)
        let repository = makeRepository()
        defer { repository.close() }
        let results = try await repository.readAll(BenchRow.self, where: "id <= $1", parameters: [10_000], orderBy: [.ascending(\.id)])
        let signal = UpdateSignal()
        let expected = LockedBox<Int64>(0)
        let subscription = results.observe { update in
            if update.new[id: Int64(updated)]?.n == expected.update({ $0 }) { signal.fire() }
        }
        defer { subscription.cancel() }
        var value: Int64 = 5_000_000
        var library = Samples(), cpu = Samples()
        log("bulk update: \(rounds) rounds…")
        for round in 0..<(rounds + 2) {
            value += 1
            expected.set(value)
            var committed = ContinuousClock.now
            let cpuBefore = processCPUTime()
            try await signal.wait {
                try writer.execute("UPDATE bench_rows SET n = \(value) WHERE id <= \(updated)")
                committed = ContinuousClock.now
            }
            if round >= 2 {  // two rounds to warm up
                library.add(ContinuousClock.now - committed)
                cpu.add(processCPUTime() - cpuBefore)
            }
        }
        try writer.prepare("rerun", "SELECT * FROM bench_rows WHERE id <= $1")
        let rerun = await measure(max(iterations / 10, 20)) { writer.executePrepared("rerun", ["10000"]) }
        let ratio = library.p50 / rerun.p50
        return BenchResult(name: "\(updated)-row UPDATE under 10000-row query", unit: "us", library: library.p50, libraryP99: library.p99,
                           baseline: rerun.p50, baselineP99: rerun.p99, ratio: ratio, target: "p50 ratio <= 5", met: ratio <= 5,
                           note: String(format: "from the UPDATE's commit to the observer's final list, against one raw re-run of the query; CPU in this process p50 %.0f us (%.1f us per updated row; the least %.1f)", cpu.p50, cpu.p50 / Double(updated), cpu.percentile(0) / Double(updated)))
    }

    /// Durable sets per second from 8 writers at once (each its own row), against the
    /// sequential rate of one writer.
    func concurrentWriters(writers: Int = 8) async throws -> BenchResult {
        let repository = LiveRepository(environment.database)
        defer { repository.close() }
        var handles: [Var<BenchRow>] = []
        for id in 0..<writers { handles.append(try await repository.read(BenchRow.self, id: Int64(100 + id))) }
        let perWriter = max(iterations / 2, 50)
        let one = handles[0]
        let sequentialStart = ContinuousClock.now
        for index in 0..<perWriter {
            one[\.name].value = "sequential \(index)"
            try await one.save()
        }
        let sequentialRate = Double(perWriter) / seconds(ContinuousClock.now - sequentialStart)
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for handle in handles {
                group.addTask {
                    for index in 0..<perWriter {
                        handle[\.name].value = "concurrent \(index)"
                        try await handle.save()
                    }
                }
            }
            try await group.waitForAll()
        }
        let concurrentRate = Double(perWriter * writers) / seconds(ContinuousClock.now - start)
        let ratio = concurrentRate / sequentialRate
        return BenchResult(name: "\(writers) concurrent writers", unit: "sets/s", library: concurrentRate, libraryP99: nil,
                           baseline: sequentialRate, baselineP99: nil, ratio: ratio, target: "rate ratio >= 2", met: ratio >= 2,
                           note: "durable sets per second, \(writers) handles saving at once, against one handle alone")
    }

    private func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
