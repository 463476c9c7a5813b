import Foundation
import Repository

extension Cases {
    /// What a reconnection of the notification feed costs 10,000 live rows none of which
    /// changed meanwhile: the feed's connection is cut, and every live row is read again
    /// (nothing tells which rows changed during an outage). From the cut to every row re-read,
    /// against one raw batched SELECT of those rows; with the CPU this process spent per row.
    /// `RESYNC_ROUNDS` (default 5) sets how many reconnections are timed, more for profiling.
    func resync(rows: Int = 10_000) async throws -> BenchResult {
        let raw = try RawPostgres(environment.conninfo)
        try raw.prepare("batch", "SELECT * FROM bench_rows WHERE id = ANY($1::bigint[])")
        let ids = "{" + (1...rows).map(String.init).joined(separator: ",") + "}"
        let baseline = await measure(20, warmUp: 3) { raw.executePrepared("batch", [ids]) }

        let repository = LiveRepository(environment.database)
        defer { repository.close() }
        var handles: [Var<BenchRow>] = []
        for id in 1...rows { handles.append(try await repository.read(BenchRow.self, id: Int64(id))) }
        let published = LockedBox(0)
        let subscriptions = handles.map { handle in handle[\.n].observe { _ in published.update { $0 += 1 } } }
        defer { subscriptions.forEach { $0.cancel() } }
        var library = Samples()
        var cpu = Samples()
        let rounds = ProcessInfo.processInfo.environment["RESYNC_ROUNDS"].flatMap(Int.init).map { max(1, $0) } ?? 5
        log("resync: \(rounds) rounds…")
        for _ in 1...rounds {
            let before = repository.rowsRead
            let cpuBefore = processCPUTime()
            let start = ContinuousClock.now
            try raw.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE '% (change feed)'")
            let deadline = start + .seconds(60)
            while repository.rowsRead - before < rows {
                guard ContinuousClock.now < deadline else { throw BenchError("the live rows were not re-read within 60 s of the cut") }
                try await Task.sleep(for: .microseconds(200))
            }
            library.add(ContinuousClock.now - start)
            cpu.add(processCPUTime() - cpuBefore)
        }
        let ratio = library.p50 / baseline.p50
        return BenchResult(name: "resync \(rows) unchanged rows", unit: "us", library: library.p50, libraryP99: library.p99,
                           baseline: baseline.p50, baselineP99: baseline.p99, ratio: ratio, target: "(informative)", met: true,
                           note: String(format: "from the feed's connection cut to every live row re-read (a reconnection included); CPU in this process p50 %.0f us (%.1f us per row); %d updates told to observers",
                                        cpu.p50, cpu.p50 / Double(rows), published.update { $0 }))
    }
}
