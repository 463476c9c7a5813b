import Foundation
import Repository

extension Cases {
    /// One row of a 10,000-row live query changes: from the UPDATE by another connection to
    /// the query's observer, against re-running the whole query raw — what a live query that
    /// re-read its result on every change would pay at least. Also counts the rows re-read.
    func liveQuery() async throws -> BenchResult {
        let writer = try RawPostgres(environment.conninfo)
        let repository = LiveRepository(environment.database)
        defer { repository.close() }
        let results = try await repository.readAll(BenchRow.self, where: "id <= $1", parameters: [10_000], orderBy: [.ascending(\.name)])
        let signal = UpdateSignal()
        let subscription = results.observe { update in
            if !update.changes().updated.isEmpty { signal.fire() }
        }
        defer { subscription.cancel() }
        let rowsBefore = repository.rowsRead
        var value: Int64 = 1_000_000
        let library = try await measure(iterations, warmUp: 20) {
            value += 1
            try await signal.wait { try writer.execute("UPDATE bench_rows SET n = \(value) WHERE id = \(value % 10_000 + 1)") }
        }
        let rowsPerChange = Double(repository.rowsRead - rowsBefore) / Double(iterations + 20)
        try writer.prepare("rerun", "SELECT * FROM bench_rows WHERE id <= $1")
        let rerun = await measure(max(iterations / 10, 20)) { writer.executePrepared("rerun", ["10000"]) }
        let ratio = library.p50 / rerun.p50
        return BenchResult(name: "live query 10000 rows, 1 change", unit: "us", library: library.p50, libraryP99: library.p99,
                           baseline: rerun.p50, baselineP99: rerun.p99, ratio: ratio,
                           target: "p50 < raw re-run of the query", met: ratio < 1,
                           note: String(format: "%.1f rows re-read per change (the raw re-run reads 10000)", rowsPerChange))
    }
}
