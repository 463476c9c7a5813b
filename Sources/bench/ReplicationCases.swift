import Foundation
import Repository

extension Cases {
    /// Issue 31's side-by-side run: propagation, the burst, the bulk UPDATE under a live query,
    /// the write path's overhead and an outage, with changes from logical replication. For the
    /// run, `bench_rows` is published and its announcement triggers are removed; they are
    /// installed again after. `budget` is the LISTEN path's physical propagation budget.
    func replication(budget: Double) async throws -> [BenchResult] {
        try await environment.database.query("SELECT live.disable_change_notifications('bench_rows')")
        try await LiveSchema.publish("bench_rows", on: environment.database)
        var replicated = self
        replicated.source = .logicalReplication
        var results: [BenchResult] = []
        let writer = try RawPostgres(environment.conninfo)
        let propagation = try await replicated.observedChange(handles: 1, writer: writer)
        results.append(BenchResult(name: "propagation, replication", unit: "us", library: propagation.p50, libraryP99: propagation.p99,
                                   baseline: budget, baselineP99: nil, ratio: propagation.p50 / budget, target: "p50 ratio <= 1.0",
                                   met: propagation.p50 <= budget,
                                   note: "against the LISTEN path's physical budget: the UPDATE through the triggers to a raw listener, plus one prepared SELECT"))
        log("burst, replication…")
        results.append(rename(try await replicated.burst(), "burst 10000 rows, replication"))
        log("bulk update under a live query, replication…")
        let bulk = try await replicated.bulkUnderLiveQuery()
        results.append(rename(bulk, bulk.name.replacingOccurrences(of: "under ", with: "under a ") + ", replication"))
        log("write path, published…")
        results.append(try await triggerOverhead(name: "UPDATE 10000 rows, published", target: 1.05,
                                                 note: "the same UPDATE on a copy of the table with nothing installed; published, no triggers"))
        results.append(try await outage(replicated: replicated))
        try await LiveSchema.enable("bench_rows", on: environment.database)
        return results
    }

    private func rename(_ result: BenchResult, _ name: String) -> BenchResult {
        BenchResult(name: name, unit: result.unit, library: result.library, libraryP99: result.libraryP99, baseline: result.baseline,
                    baselineP99: result.baselineP99, ratio: result.ratio, target: result.target, met: result.met, note: result.note)
    }

    /// 1,000 live rows; for 5 seconds the feed's connections are cut every 100 ms while one of
    /// those rows is updated each time; then, once every handle holds its row: the rows read
    /// beyond the ones changed — through replication (its slot resumes) against the same
    /// through notifications on a second table that keeps its triggers (everything re-read at
    /// each reconnection).
    private func outage(replicated: Cases) async throws -> BenchResult {
        let writer = try RawPostgres(environment.conninfo)
        try writer.execute("""
            DROP TABLE IF EXISTS bench_listened; CREATE TABLE bench_listened (LIKE bench_rows INCLUDING ALL);
            INSERT INTO bench_listened SELECT * FROM bench_rows WHERE id <= 1000; SELECT live.enable_change_notifications('bench_listened')
            """)
        struct Listened: Record, Equatable { static let tableName = "bench_listened"; var id: Int64; var name: String; var n: Int64 }
        func extraRows<R: Record & Equatable>(_: R.Type, table: String, repository: LiveRepository) async throws -> (extra: Int, changed: Int) where R.ID == Int64 {
            defer { repository.close() }
            var handles: [Var<R>] = []
            for id in 1...1000 { handles.append(try await repository.read(R.self, id: Int64(id))) }
            let before = repository.rowsRead
            let end = ContinuousClock.now + .seconds(5)
            var changed = Set<Int64>()
            while ContinuousClock.now < end {
                try writer.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE '% (change feed)'")
                let id = Int64.random(in: 1...1000)
                try writer.execute("UPDATE \(table) SET n = n + 1 WHERE id = \(id)")
                changed.insert(id)
                try await Task.sleep(for: .milliseconds(100))
            }
            // Every handle holds what the table holds.
            let final = try await environment.database.query("SELECT id, n FROM \(table) WHERE id <= 1000 ORDER BY id")
            let expected = try final.map { try $0.decode(Int64.self, at: 1) }
            let converged = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < converged, !zip(handles, expected).allSatisfy({ ($0.value[keyPath: \R.id] >= 0) && n(of: $0.value) == $1 }) {
                try await Task.sleep(for: .milliseconds(10))
            }
            return (repository.rowsRead - before - changed.count, changed.count)
        }
        func n<R>(of value: R) -> Int64 { (value as? BenchRow)?.n ?? (value as? Listened)?.n ?? -1 }
        let (replicatedExtra, changed) = try await extraRows(BenchRow.self, table: "bench_rows", repository: replicated.makeRepository())
        let (listenedExtra, _) = try await extraRows(Listened.self, table: "bench_listened", repository: LiveRepository(environment.database))
        return BenchResult(name: "rows re-read after a 5 s outage, replication", unit: "rows", library: Double(max(0, replicatedExtra)), libraryP99: nil,
                           baseline: Double(listenedExtra), baselineP99: nil, ratio: Double(max(0, replicatedExtra)) / Double(max(listenedExtra, 1)),
                           target: "0 rows", met: replicatedExtra <= 0,
                           note: "1,000 live rows, the feed cut every 100 ms for 5 s while \(changed) of them changed: rows read beyond those; baseline: the same through notifications")
    }
}
