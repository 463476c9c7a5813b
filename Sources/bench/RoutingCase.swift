import Foundation
import Repository

extension Cases {
    /// Issue 29's matching target, alone: a stream of read rows matched against `count` live
    /// queries `name = $1` (a distinct name each), in this process — reading each row's values
    /// from its cells, finding the queries it concerns through the routes' index, evaluating
    /// their conditions, and noting who holds what, as the router does for every read. The
    /// database is not involved: the rows are one real result, read once beforehand.
    func routing(count: Int = 10_000) async throws -> [BenchResult] {
        let result = try await environment.database.query("SELECT id, name, n FROM bench_rows WHERE id <= $1 ORDER BY id", [count])
        let columns: [String: CompiledCondition.Column] = [
            "id": .init(kind: .integer, bytewiseOrder: true), "name": .init(kind: .text, bytewiseOrder: false),
            "n": .init(kind: .integer, bytewiseOrder: true),
        ]
        let positions = Dictionary(uniqueKeysWithValues: result.columns.enumerated().map { ($1.name, $0) })
        let ids = try result.map { try $0.decode(Int64.self, at: 0) }

        /// Routes over `queries` queries, query `i` holding row `i`.
        func routes(queries: Int) -> (QueryRoutes<Int64>, [QueryToken]) {
            var routes = QueryRoutes<Int64>()
            let tokens = (1...queries).map { _ in QueryToken() }
            for (index, token) in tokens.enumerated() {
                let condition = CompiledCondition.compile("name = $1", parameters: [.text("row \(index + 1)")], columns: columns)!
                _ = routes.add(ObjectIdentifier(token), .here(condition))
                routes.record(ObjectIdentifier(token), checked: nil, matching: [Int64(index + 1)])
            }
            return (routes, tokens)
        }
        /// Routes the rows at `rows` (positions in the result) `passes` times: seconds per row.
        func route(_ routes: inout QueryRoutes<Int64>, rows: [Int], passes: Int) -> Double {
            let start = processCPUTime()
            for _ in 0..<passes {
                for row in rows {
                    var values: ResultRowValues? = ResultRowValues(result, row: row, positions: positions, columns: columns)
                    for (query, member) in routes.verdicts(for: ids[row], row: &values, server: [:]) {
                        routes.record(query, checked: [ids[row]], matching: member == true ? [ids[row]] : [])
                    }
                }
            }
            return (processCPUTime() - start).seconds / Double(passes * rows.count)
        }

        var (many, manyTokens) = routes(queries: count)
        var (one, oneTokens) = routes(queries: 1)
        let everyRow = Array(result.indices)
        _ = route(&many, rows: everyRow, passes: 1)  // warm-up
        var rates: [Double] = [], aloneTimes: [Double] = [], amongTimes: [Double] = []
        for _ in 0..<5 {
            rates.append(1 / route(&many, rows: everyRow, passes: 5))
            // Row 1 alone with its query, and among `count - 1` queries it does not concern.
            aloneTimes.append(route(&one, rows: [0], passes: 20_000) * 1e6)
            amongTimes.append(route(&many, rows: [0], passes: 20_000) * 1e6)
        }
        withExtendedLifetime((manyTokens, oneTokens)) {}
        let rate = Samples(rates).p50, alone = Samples(aloneTimes), among = Samples(amongTimes), extra = among.p50 - alone.p50
        return [
            BenchResult(name: "matching \(count) changed rows, \(count) queries", unit: "rows/s", library: rate, libraryP99: nil,
                        baseline: 50_000, baselineP99: nil, ratio: rate / 50_000, target: ">= 50000 rows/s", met: rate >= 50_000,
                        note: "in this process: each read row's values from its cells, the queries it concerns through the index, their conditions, who holds what; median of 5"),
            BenchResult(name: "matching CPU, \(count) queries", unit: "us", library: among.p50, libraryP99: among.p99,
                        baseline: alone.p50, baselineP99: alone.p99, ratio: among.p50 / alone.p50,
                        target: "<= 10 us more than one query", met: extra <= 10,
                        note: String(format: "per routed row: row 1 among %d queries it does not concern, against row 1 with its query alone; %.3f us added", count - 1, extra)),
        ]
    }
}

/// Stands for a live query: the routes know queries by their identity.
final class QueryToken {}
