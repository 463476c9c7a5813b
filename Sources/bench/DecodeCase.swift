import Repository

extension Cases {
    /// Decoding (and, last, encoding) alone, in this process: `QueryResult.decode(BenchRow.self)` (Codable, columns
    /// found by property name) against the same cells read by position with no `Decodable` —
    /// for a one-row result, as a read or a write's returned row, and a 10,000-row one, as a
    /// burst's re-read. CPU time per row, median of 5; informative: what the per-row engine's
    /// first step costs (issue 30).
    func decoding(rows: Int = 10_000) async throws -> [BenchResult] {
        let many = try await environment.database.query("SELECT id, name, n FROM bench_rows WHERE id <= $1 ORDER BY id", [rows])
        let one = try await environment.database.query("SELECT id, name, n FROM bench_rows WHERE id = 1")

        /// CPU microseconds per row to decode `result` `passes` times with `decode`.
        func perRow(_ result: QueryResult, passes: Int, _ decode: (QueryResult) throws -> [BenchRow]) rethrows -> Double {
            let start = processCPUTime()
            var kept = 0
            for _ in 0..<passes { kept &+= try decode(result).count }
            precondition(kept == passes * result.count)
            return (processCPUTime() - start).seconds * 1e6 / Double(passes * result.count)
        }
        let codable: (QueryResult) throws -> [BenchRow] = { try $0.decode(BenchRow.self) }
        let positional: (QueryResult) throws -> [BenchRow] = { result in
            try result.map { BenchRow(id: try $0.decode(Int64.self, at: 0), name: try $0.decode(String.self, at: 1), n: try $0.decode(Int64.self, at: 2)) }
        }
        var figures: [String: [Double]] = [:]
        _ = try perRow(many, passes: 1, codable)  // warm-up
        for _ in 0..<5 {
            figures["one", default: []].append(try perRow(one, passes: 20_000, codable))
            figures["one raw", default: []].append(try perRow(one, passes: 20_000, positional))
            figures["many", default: []].append(try perRow(many, passes: 5, codable))
            figures["many raw", default: []].append(try perRow(many, passes: 5, positional))
        }
        func row(_ name: String, _ key: String) -> BenchResult {
            let library = Samples(figures[key]!).p50, raw = Samples(figures[key + " raw"]!).p50
            return BenchResult(name: name, unit: "us", library: library, libraryP99: nil, baseline: raw, baselineP99: nil,
                               ratio: library / raw, target: "(informative)", met: true,
                               note: "CPU per row in this process, median of 5: Codable by property name against the same cells read by position")
        }
        return [row("decode a 1-row result, per row", "one"), row("decode a \(rows)-row result, per row", "many"), try encoding()]
    }

    /// Encoding alone, in this process: `RowEncoder().encode(_:)` of a `BenchRow` (Codable, as a
    /// write encodes a record, several times per set) against the same columns and values made
    /// by hand. CPU time per record, median of 5; informative.
    private func encoding() throws -> BenchResult {
        let records = (0..<1_000).map { BenchRow(id: Int64($0), name: "name \($0)", n: Int64($0) * 7) }
        let encoder = RowEncoder()
        /// CPU microseconds per record to encode every record `passes` times with `encode`.
        func perRecord(passes: Int, _ encode: (BenchRow) throws -> [(column: String, value: SQLValue)]) rethrows -> Double {
            let start = processCPUTime()
            var kept = 0
            for _ in 0..<passes { for record in records { kept &+= try encode(record).count } }
            precondition(kept == passes * records.count * 3)
            return (processCPUTime() - start).seconds * 1e6 / Double(passes * records.count)
        }
        let byHand: (BenchRow) -> [(column: String, value: SQLValue)] = { record in
            [("id", .text(String(record.id))), ("name", .text(record.name)), ("n", .text(String(record.n)))]
        }
        _ = try perRecord(passes: 1) { try encoder.encode($0) }  // warm-up
        var library: [Double] = [], raw: [Double] = []
        for _ in 0..<5 {
            library.append(try perRecord(passes: 20) { try encoder.encode($0) })
            raw.append(perRecord(passes: 20, byHand))
        }
        let (encoded, made) = (Samples(library).p50, Samples(raw).p50)
        return BenchResult(name: "encode a record", unit: "us", library: encoded, libraryP99: nil, baseline: made, baselineP99: nil,
                           ratio: encoded / made, target: "(informative)", met: true,
                           note: "CPU per record in this process, median of 5: Codable through RowEncoder against the same columns and values made by hand")
    }
}
