import Foundation
@testable import Repository
import Testing

/// The promise "no lost update", tried the way users break it: several OS processes writing
/// the same rows at once through live handles, with an audit trigger recording every
/// committed row version.
@Suite("Multi-process convergence")
struct ConvergenceTests {
    static let workers = 4
    static let rows = 40
    /// `SYNC_CONVERGENCE_SECONDS` sets how long the workers write.
    static let seconds = ProcessInfo.processInfo.environment["SYNC_CONVERGENCE_SECONDS"].flatMap(Double.init) ?? 3

    struct Report: Codable {
        var worker: Int
        var policy: String
        var sets: Int
        var ownSets: Int
        var bulkStatements: Int
        var listsChecked: Int
        var sharedConfirmed: [[Int64]]
        var lastOwn: [String: Int64]
        var conflictsThrown: Int
        var feedReconnects: Int
        var refreshesFailed: Int
        var conflictsReported: Int
        var sharedReportedLost: [[Int64]]
        var otherErrors: [String]
        var convergeMilliseconds: Int
        var converged: Bool
        var mismatch: String?
    }

    /// Every worker's listening connection is cut each time this many more commits are audited.
    static let commitsBetweenFeedCuts: Int64 = 1000

    static var worker: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("test-worker").path
    }

    /// The test schema: rows with a shared column and one column per worker, under change
    /// notifications (versioned by `xmin`: no version column); an audit of every committed
    /// update (the writing transaction, who, old and new values); a phase.
    func makeDatabase() async throws -> Database {
        let database = try await TestServer.makeDatabase()
        try await Migrator(directory: ProjectMigrationsTests.directory).migrate(database)
        try await database.withConnection { connection in
            try await connection.execute(script: """
                CREATE TABLE sync_rows (id bigint PRIMARY KEY, shared bigint NOT NULL DEFAULT 0,
                    w0 bigint NOT NULL DEFAULT 0, w1 bigint NOT NULL DEFAULT 0, w2 bigint NOT NULL DEFAULT 0,
                    w3 bigint NOT NULL DEFAULT 0);
                SELECT live.enable_change_notifications('sync_rows');
                INSERT INTO sync_rows (id) SELECT generate_series(1, \(Self.rows));
                CREATE TABLE sync_audit (n bigserial PRIMARY KEY, row_id bigint, version bigint, writer text,
                    old_shared bigint, new_shared bigint, old_w bigint[], new_w bigint[]);
                CREATE FUNCTION sync_audit() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    INSERT INTO sync_audit (row_id, version, writer, old_shared, new_shared, old_w, new_w)
                    VALUES (NEW.id, pg_current_xact_id()::xid::text::bigint, current_setting('application_name'), OLD.shared, NEW.shared,
                            ARRAY[OLD.w0, OLD.w1, OLD.w2, OLD.w3], ARRAY[NEW.w0, NEW.w1, NEW.w2, NEW.w3]);
                    RETURN NULL;
                END $$;
                CREATE TRIGGER sync_audit AFTER UPDATE ON sync_rows FOR EACH ROW EXECUTE FUNCTION sync_audit();
                CREATE TABLE sync_control (phase text NOT NULL);
                INSERT INTO sync_control VALUES ('ready');
                """)
        }
        return database
    }

    @Test("4 processes × 40 rows, mixed policies, statements flipping many rows, listening connections cut: every handle converges, every list published is ordered and whole, nothing is lost or overwritten unreported")
    func convergence() async throws {
        let database = try await makeDatabase()
        let url = try await TestServer.connectionString(database: database.name())
        let seed = UInt64.random(in: 0...UInt64(UInt32.max))
        let environment = ProcessInfo.processInfo.environment.merging(["DATABASE_URL": url]) { $1 }
        let children = try (0..<Self.workers).map { index in
            try ChildProcess(Self.worker, ["sync", String(index), String(Self.seconds), String(seed &+ UInt64(index) &* 104_729),
                                           index % 2 == 0 ? "databaseWins" : "localWins"], environment: environment)
        }
        let lines = children.map { child in
            let lines = Recorder<String>()
            child.readOutputLines { lines.append($0) }
            return lines
        }
        defer { for child in children where child.exitStatusIfExited() == nil { kill(child.pid, SIGKILL) } }
        func all(said word: String) async throws -> Bool {
            try await eventually(timeout: .seconds(60)) { lines.allSatisfy { $0.all.contains(word) } }
        }
        try #require(try await all(said: "ready"), "workers did not start (seed \(seed))")
        try await database.query("UPDATE sync_control SET phase = 'go'")
        let feedCuts = Task { try await cutListeningConnections(of: database) }
        let written = try await all(said: "written")
        feedCuts.cancel()
        let cuts = try await feedCuts.value
        try #require(written, "workers did not finish writing (seed \(seed))")
        try await database.query("UPDATE sync_control SET phase = 'check'")
        for child in children { #expect(child.wait() == 0) }
        // The output is read on another thread, which may still be taking in the report line.
        try #require(try await eventually { lines.allSatisfy { $0.all.last?.first == "{" } }, "a worker printed no report (seed \(seed))")
        let reports = try lines.map { lines in
            try JSONDecoder().decode(Report.self, from: Data((lines.all.last ?? "").utf8))
        }

        // Audit: no commit changed a column its writer did not edit (its own, or the shared one).
        let audit = try await database.query("SELECT row_id, writer, old_shared, new_shared, old_w, new_w FROM sync_audit ORDER BY n")
        var staleWrites: [String] = []
        var committedShared: Set<[Int64]> = []
        for row in audit {
            let writer = try row.decode(String.self, column: "writer")
            let (oldW, newW) = (try row.decode([Int64].self, column: "old_w"), try row.decode([Int64].self, column: "new_w"))
            let id = try row.decode(Int64.self, column: "row_id")
            committedShared.insert([id, try row.decode(Int64.self, column: "new_shared")])
            guard let index = Int(writer.replacingOccurrences(of: "sync-worker-", with: "")) else { continue }
            for column in 0..<Self.workers where column != index && oldW[column] != newW[column] {
                staleWrites.append("\(writer) changed w\(column) of row \(id) from \(oldW[column]) to \(newW[column])")
            }
        }
        // Each worker's last value of its own column is in the table (nobody else writes it).
        let table = try await database.query("SELECT id, w0, w1, w2, w3 FROM sync_rows")
        var ownLost: [String] = []
        for row in table {
            let id = try row.decode(Int64.self, column: "id")
            for report in reports {
                guard let expected = report.lastOwn[String(id)] else { continue }
                let stored = try row.decode(Int64.self, column: "w\(report.worker)")
                if stored != expected { ownLost.append("row \(id) w\(report.worker) is \(stored), its writer last set \(expected)") }
            }
        }
        // Every shared value whose save() returned was committed at some point, or superseded
        // by a later value of the same process (values grow per process) that was committed or
        // reported lost in a conflict (thrown by some save(), and on `errors`).
        let unreportedLosses = reports.flatMap { report in
            report.sharedConfirmed.filter { confirmed in
                let (row, value) = (confirmed[0], confirmed[1])
                let sameWriterLater = { (other: [Int64]) in other[0] == row && other[1] >= value && other[1] / 1_000_000_000 == value / 1_000_000_000 }
                return !committedShared.contains(where: sameWriterLater) && !report.sharedReportedLost.contains(where: sameWriterLater)
            }
        }

        let sets = reports.map(\.sets).reduce(0, +)
        let thrown = reports.map(\.conflictsThrown).reduce(0, +)
        let reported = reports.map(\.conflictsReported).reduce(0, +)
        print("""
            convergence (seed \(seed)): \(Self.workers) processes × \(Self.rows) rows × \(Self.seconds) s: \
            \(sets) sets (\(reports.map(\.ownSets).reduce(0, +)) own column, \(reports.map(\.sharedConfirmed.count).reduce(0, +)) shared confirmed), \
            \(audit.count) commits, conflicts thrown \(thrown), reported \(reported), \
            unreported losses \(unreportedLosses.count + ownLost.count), stale writes \(staleWrites.count), \
            converged in \(reports.map(\.convergeMilliseconds).max() ?? -1) ms, \
            \(reports.map(\.bulkStatements).reduce(0, +)) statements flipping many rows, \
            \(reports.map(\.listsChecked).reduce(0, +)) live-query lists checked, \
            \(cuts) listening connections cut (\(reports.map(\.feedReconnects).reduce(0, +)) reconnects, \
            \(reports.map(\.refreshesFailed).reduce(0, +)) re-reads cut)
            """)
        let converged = reports.allSatisfy { $0.converged }
        #expect(converged, "\(reports.compactMap(\.mismatch)) (seed \(seed))")
        #expect(staleWrites.isEmpty, "\(staleWrites.prefix(5)) (seed \(seed))")
        #expect(ownLost.isEmpty, "\(ownLost.prefix(5)) (seed \(seed))")
        let lossHistory = try await history(of: unreportedLosses.first, in: database)
        #expect(unreportedLosses.isEmpty, "\(unreportedLosses.prefix(5)) (seed \(seed)); \(lossHistory)")
        let otherErrors = reports.flatMap(\.otherErrors)
        #expect(otherErrors.isEmpty, "\(otherErrors.prefix(5)) (seed \(seed))")
        #expect(sets > Self.workers * 10, "the workers barely wrote")
        #expect(reports.allSatisfy { $0.listsChecked > 0 }, "a live query published nothing")
        #expect(cuts == 0 || reports.contains { $0.feedReconnects > 0 }, "no change feed reconnected (seed \(seed))")
    }

    /// While the workers write: terminates every worker's listening connection each time
    /// another ``commitsBetweenFeedCuts`` commits are audited, until cancelled; how many
    /// connections it terminated.
    func cutListeningConnections(of database: Database) async throws -> Int {
        var (cut, next) = (0, Self.commitsBetweenFeedCuts)
        while !Task.isCancelled {
            let commits = try await database.query("SELECT count(*) FROM sync_audit")[0].decode(Int64.self, at: 0)
            if commits >= next {
                cut += try await database.query("""
                    SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity
                    WHERE application_name LIKE 'sync-worker-% (change feed)'
                    """)[0].decode(Int.self, at: 0)
                next = commits + Self.commitsBetweenFeedCuts
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return cut
    }

    /// For a failure's message: the commits of a lost value's row, from its writer's last
    /// commit before the value to the end (the value is [row, value, set through the query]).
    func history(of lost: [Int64]?, in database: Database) async throws -> String {
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
