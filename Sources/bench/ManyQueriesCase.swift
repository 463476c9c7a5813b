import Foundation
import IdentifiedCollections
import Repository

extension Cases {
    /// Issue 29's case: one live query per client, `name = $1` with a distinct name each, over
    /// `bench_rows`. One row changes; the query holding it must see the change as fast with
    /// 10,000 other queries on the table as alone, with at most 2 statements per changed row
    /// and little CPU for the queries it does not concern.
    func manyQueries(count: Int = 10_000) async throws -> [BenchResult] {
        let writer = try RawPostgres(environment.conninfo)
        // As an application would have it: opening a query by name is an index lookup, not a scan.
        try writer.execute("CREATE INDEX IF NOT EXISTS bench_rows_name ON bench_rows (name)")
        let rounds = max(iterations / 6, 20)
        // Alone and among `count`, three times each, alternating: this machine drifts more over
        // a minute than the difference measured.
        var aloneRun = ChangeSamples(), manyRun = ChangeSamples()
        var opening: (time: Duration, statements: Int, bytesPerQuery: Double)?
        var streamRate = 0.0
        for _ in 0..<3 {
            let single = LiveRepository(environment.database)
            let alone = try await single.readAll(BenchRow.self, where: "name = $1", parameters: ["row 1"])
            aloneRun.add(try await changes(of: 1, followedBy: alone, writer: writer, rounds: rounds, repository: single))
            single.close()

            // `count` live queries, each its own name; the observed one among them.
            let repository = LiveRepository(environment.database)
            let memoryBefore = residentMemory(), statementsBefore = repository.rowQueries
            let clock = ContinuousClock(), openStart = clock.now
            var queries: [Var<IdentifiedArrayOf<BenchRow>>] = []
            queries.reserveCapacity(count)
            for index in 1...count {
                queries.append(try await repository.readAll(BenchRow.self, where: "name = $1", parameters: ["row \(index)"]))
            }
            if opening == nil {
                opening = (clock.now - openStart, repository.rowQueries - statementsBefore, Double(residentMemory() - memoryBefore) / Double(count))
            }
            manyRun.add(try await changes(of: 1, followedBy: queries[0], writer: writer, rounds: rounds, repository: repository))
            if streamRate == 0 { streamRate = try await stream(through: queries, writer: writer) }
            withExtendedLifetime(queries) {}
            repository.close()
        }
        let (openTime, openStatements, bytesPerQuery) = opening!

        let ratio = manyRun.latency.p50 / aloneRun.latency.p50
        let extraCPU = manyRun.cpu.p50 - aloneRun.cpu.p50
        return [
            BenchResult(name: "\(count) live queries, 1 row changes", unit: "us", library: manyRun.latency.p50, libraryP99: manyRun.latency.p99,
                        baseline: aloneRun.latency.p50, baselineP99: aloneRun.latency.p99, ratio: ratio,
                        target: "p50 <= 1.2x one query; <= 2 statements per row", met: ratio <= 1.2 && manyRun.statementsPerChange <= 2,
                        note: String(format: "from the UPDATE to the observer of the query holding the row, against the same with that query alone; %.2f statements per changed row (alone: %.2f)",
                                     manyRun.statementsPerChange, aloneRun.statementsPerChange)),
            BenchResult(name: "CPU per changed row, \(count) queries", unit: "us", library: manyRun.cpu.p50, libraryP99: manyRun.cpu.p99,
                        baseline: aloneRun.cpu.p50, baselineP99: aloneRun.cpu.p99, ratio: manyRun.cpu.p50 / aloneRun.cpu.p50,
                        target: "(informative: see matching CPU)", met: true,
                        note: String(format: "this process's CPU per change, all threads; %.1f us added by the %d queries the row does not concern — "
                                     + "this end-to-end figure varies by tens of us between runs here, so the target is judged on the matching alone", extraCPU, count - 1)),
            BenchResult(name: "opening \(count) live queries", unit: "us", library: openTime.microseconds / Double(count), libraryP99: nil,
                        baseline: 0, baselineP99: nil, ratio: Double(openStatements) / Double(count),
                        target: "<= 1 statement each", met: openStatements <= count,
                        note: String(format: "per query; %d statements in all; %.0f bytes of resident memory per idle query; ratio column: statements per query", openStatements, bytesPerQuery)),
            BenchResult(name: "\(count) changed rows in one UPDATE", unit: "rows/s", library: streamRate, libraryP99: nil,
                        baseline: 50_000, baselineP99: nil, ratio: streamRate / 50_000,
                        target: ">= 50000 rows/s (informative: end to end)", met: streamRate >= 50_000,
                        note: "from the UPDATE to the last of the \(count) queries' observers, reading included; the target is for matching alone"),
        ]
    }

    /// Every row of the table changes in one statement; all of `queries` see it: rows per second.
    private func stream(through queries: [Var<IdentifiedArrayOf<BenchRow>>], writer: RawPostgres) async throws -> Double {
        let seen = LockedBox(0), done = UpdateSignal()
        let subscriptions = queries.map { query in
            query.observe { update in
                if !update.changes().updated.isEmpty, seen.update({ $0 += 1; return $0 }) == queries.count { done.fire() }
            }
        }
        defer { subscriptions.forEach { $0.cancel() } }
        let start = ContinuousClock.now
        try await done.wait { try writer.execute("UPDATE bench_rows SET n = n + 1 WHERE id <= \(queries.count)") }
        return Double(queries.count) / (ContinuousClock.now - start).seconds
    }

    /// `rounds` UPDATEs of row `id` by another connection, each waited for at `query`'s observer.
    private func changes(of id: Int64, followedBy query: Var<IdentifiedArrayOf<BenchRow>>, writer: RawPostgres, rounds: Int,
                         repository: LiveRepository) async throws -> ChangeSamples {
        let expected = LockedBox<Int64>(0), signal = UpdateSignal()
        let subscription = query.observe { update in
            if update.new[id: id]?.n == expected.update({ $0 }) { signal.fire() }
        }
        defer { subscription.cancel() }
        var latency = Samples(), cpu = Samples()
        var value = Int64.random(in: 1_000_000...9_000_000)
        let statementsBefore = repository.rowQueries
        for round in 0..<(rounds + 20) {
            value += 1
            expected.set(value)
            let start = ContinuousClock.now, cpuBefore = processCPUTime()
            try await signal.wait { try writer.execute("UPDATE bench_rows SET n = \(value) WHERE id = \(id)") }
            if round >= 20 {
                latency.add(ContinuousClock.now - start)
                cpu.add(processCPUTime() - cpuBefore)
            }
        }
        return ChangeSamples(latency: latency, cpu: cpu, changes: rounds + 20, statements: repository.rowQueries - statementsBefore)
    }
}

/// What changes of one row cost: from the UPDATE to the observer, this process's CPU, and the
/// statements the repository ran for them.
struct ChangeSamples {
    var latency = Samples(), cpu = Samples()
    var changes = 0, statements = 0
    var statementsPerChange: Double { Double(statements) / Double(max(changes, 1)) }

    mutating func add(_ other: ChangeSamples) {
        latency = Samples(latency.values + other.latency.values)
        cpu = Samples(cpu.values + other.cpu.values)
        changes += other.changes
        statements += other.statements
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
    var microseconds: Double { seconds * 1e6 }
}
