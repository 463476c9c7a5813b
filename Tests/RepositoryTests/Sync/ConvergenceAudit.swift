import Foundation
@testable import Repository

/// What the audit trigger recorded in a convergence run (every committed row version), and
/// the losses it reveals. Values are unique: each worker's count from (index + 1) × 10⁹ up,
/// so a value names its writer and later values of one writer are larger.
struct ConvergenceAudit {
    let database: Database
    let workers: Int
    /// How many row versions were committed.
    let commits: Int
    /// Commits that changed a column their writer did not edit (another worker's own column).
    let staleWrites: [String]
    /// Every (row, shared value) committed.
    let committedShared: Set<[Int64]>

    init(_ database: Database, workers: Int) async throws {
        self.database = database
        self.workers = workers
        let audit = try await database.query("SELECT row_id, writer, old_shared, new_shared, old_w, new_w FROM sync_audit ORDER BY n")
        var staleWrites: [String] = []
        var committedShared: Set<[Int64]> = []
        for row in audit {
            let writer = try row.decode(String.self, column: "writer")
            let (oldW, newW) = (try row.decode([Int64].self, column: "old_w"), try row.decode([Int64].self, column: "new_w"))
            let id = try row.decode(Int64.self, column: "row_id")
            committedShared.insert([id, try row.decode(Int64.self, column: "new_shared")])
            guard let index = Int(writer.replacingOccurrences(of: "sync-worker-", with: "")) else { continue }
            for column in 0..<workers where column != index && oldW[column] != newW[column] {
                staleWrites.append("\(writer) changed w\(column) of row \(id) from \(oldW[column]) to \(newW[column])")
            }
        }
        (commits, self.staleWrites, self.committedShared) = (audit.count, staleWrites, committedShared)
    }

    /// Each worker's last value of its own column is in the table (nobody else writes it) —
    /// unless that value's save failed (`ownUnsettled`), when the table holds an earlier value
    /// of the same worker, or the first one.
    func ownLost(_ reports: [ConvergenceRun.Report]) async throws -> [String] {
        var lost: [String] = []
        for row in try await database.query("SELECT id, w0, w1, w2, w3 FROM sync_rows") {
            let id = try row.decode(Int64.self, column: "id")
            for report in reports {
                guard let expected = report.lastOwn[String(id)] else { continue }
                let stored = try row.decode(Int64.self, column: "w\(report.worker)")
                let earlier = stored == 0 || (stored / 1_000_000_000 == expected / 1_000_000_000 && stored < expected)
                if stored == expected || (report.ownUnsettled.contains(String(id)) && earlier) { continue }
                lost.append("row \(id) w\(report.worker) is \(stored), its writer last set \(expected)")
            }
        }
        return lost
    }

    /// Every shared value whose save() returned was committed at some point, or superseded by
    /// a later value of the same process that was committed or reported lost in a conflict
    /// (thrown by some save(), and on `errors`): those that were not.
    func unreportedLosses(_ reports: [ConvergenceRun.Report]) -> [[Int64]] {
        reports.flatMap { report in
            report.sharedConfirmed.filter { confirmed in
                let (row, value) = (confirmed[0], confirmed[1])
                let sameWriterLater = { (other: [Int64]) in other[0] == row && other[1] >= value && other[1] / 1_000_000_000 == value / 1_000_000_000 }
                return !committedShared.contains(where: sameWriterLater) && !report.sharedReportedLost.contains(where: sameWriterLater)
            }
        }
    }

    /// For a failure's message: the commits of a lost value's row, from its writer's last
    /// commit before the value to the end (the value is [row, value, set through the query]).
    func history(of lost: [Int64]?) async throws -> String {
        guard let lost else { return "" }
        let writer = "sync-worker-\(lost[1] / 1_000_000_000 - 1)"
        let rows = try await database.query("""
            SELECT n, version, writer, old_shared, new_shared FROM sync_audit WHERE row_id = $1 AND n >= coalesce(
                (SELECT max(n) FROM sync_audit WHERE row_id = $1 AND writer = $2 AND new_shared < $3 AND new_shared / 1000000000 = $3 / 1000000000), 0)
            ORDER BY n LIMIT 40
            """, [lost[0], writer, lost[1]])
        let lines = try rows.map { row in
            "v\(try row.decode(Int64.self, column: "version")) \(try row.decode(String.self, column: "writer")): "
                + "\(try row.decode(Int64.self, column: "old_shared")) -> \(try row.decode(Int64.self, column: "new_shared"))"
        }
        return "set through the query: \(lost.count > 2 && lost[2] == 1); commits of row \(lost[0]): " + lines.joined(separator: "; ")
    }
}
