import Foundation
@testable import Repository
import Testing

/// One run of the multi-process convergence test: four `test-worker sync` processes write the
/// same rows while a fault is injected, then every promise is checked against the audit.
struct ConvergenceRun {
    static let workers = 4
    static let rows = 40
    /// `SYNC_CONVERGENCE_SECONDS` sets how long the workers write.
    static let seconds = ProcessInfo.processInfo.environment["SYNC_CONVERGENCE_SECONDS"].flatMap(Double.init) ?? 3

    /// What a worker prints when it is done (see `Tests/TestWorker/SyncRun.swift`).
    struct Report: Codable {
        var worker: Int
        var policy: String
        var sets: Int
        var ownSets: Int
        var bulkStatements: Int
        var listsChecked: Int
        var sharedConfirmed: [[Int64]]
        var lastOwn: [String: Int64]
        var ownUnsettled: [String]
        var conflictsThrown: Int
        var conflictsReported: Int
        var sharedReportedLost: [[Int64]]
        var savesFailed: Int
        var writesFailed: Int
        var feedReconnects: Int
        var refreshesFailed: Int
        var failures: [String]
        var otherErrors: [String]
        var convergeMilliseconds: Int
        var rowsFromStream: Int
        var converged: Bool
        var mismatch: String?
    }

    static var worker: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("test-worker").path
    }

    /// The test schema in `database`: rows with a shared column and one column per worker,
    /// under change notifications (versioned by `xmin`: no version column); an audit of every
    /// committed update (the writing transaction, who, old and new values); a phase.
    /// With `composite`, the table is keyed by `(tenant, id)`, every row of tenant `acme`.
    /// With `replication`, the table is published for logical replication instead of
    /// announced by triggers.
    static func prepare(_ database: Database, composite: Bool = false, replication: Bool = false) async throws {
        try await migrateProject(database)
        let key = composite ? "tenant text NOT NULL DEFAULT 'acme', id bigint" : "id bigint PRIMARY KEY"
        try await database.withConnection { connection in
            try await connection.execute(script: """
                CREATE TABLE sync_rows (\(key), shared bigint NOT NULL DEFAULT 0,
                    w0 bigint NOT NULL DEFAULT 0, w1 bigint NOT NULL DEFAULT 0, w2 bigint NOT NULL DEFAULT 0,
                    w3 bigint NOT NULL DEFAULT 0\(composite ? ", PRIMARY KEY (tenant, id)" : ""));
                \(replication ? "CREATE PUBLICATION live_changes FOR TABLE sync_rows;" : "SELECT live.enable_change_notifications('sync_rows');")
                INSERT INTO sync_rows (id) SELECT generate_series(1, \(rows));
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
    }

    /// The test's own pool onto the test database.
    let database: Database
    /// The connection string the workers use.
    let url: String
    /// Whether the table is keyed by two columns (see ``prepare(_:composite:replication:)``).
    var composite = false
    /// Where the workers learn of changes.
    var source: ChangeSource = .notifications
    /// Whether a run through logical replication must have taken rows from the stream (not
    /// across a server restart: see ``ConvergenceTests/convergenceAcrossRestart(through:)``).
    var requiresStreamedRows = true
    /// Whether each worker also holds a live query of every row (and writes through it), or
    /// its handles alone — which, through logical replication, take rows from the stream.
    var liveQuery = true
    let seed = UInt64.random(in: 0...UInt64(UInt32.max))

    /// Starts the workers and lets them write while `fault` runs: for at least ``seconds``, and
    /// until it is over (it is cancelled then, and says what it did; a fault that must run to
    /// its end ignores that). Then lets them converge and checks every promise. The workers'
    /// reports, for checks particular to the fault.
    func run(fault: @escaping @Sendable () async throws -> String) async throws -> [Report] {
        let environment = ProcessInfo.processInfo.environment.merging(
            ["DATABASE_URL": url, "SYNC_CHANGE_SOURCE": source == .notifications ? "notifications" : "logicalReplication",
             "SYNC_LIVE_QUERY": liveQuery ? "1" : "0"]) { $1 }
        let children = try (0..<Self.workers).map { index in
            let policy = index % 2 == 0 ? "databaseWins" : "localWins"
            let arguments: [String] = ["sync", String(index), String(Self.seconds), String(seed &+ UInt64(index) &* 104_729), policy]
            return try ChildProcess(Self.worker, arguments + (composite ? ["composite"] : []), environment: environment)
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
        /// Each worker's last lines (and how it ended, if it did), for a failure's message.
        func lastSaid() -> String {
            zip(children, lines).enumerated().map { index, worker in
                let (child, lines) = worker
                let ended = child.exitStatusIfExited().map { status in
                    " — exited \(status): \(String(decoding: child.readErrors(), as: UTF8.self).prefix(500))"
                } ?? ""
                return "worker \(index): \(lines.all.suffix(3).joined(separator: " | "))\(ended)"
            }.joined(separator: "; ")
        }
        try #require(try await all(said: "ready"), "workers did not start (seed \(seed)): \(lastSaid())")
        if source != .notifications {
            // Each worker's feed streams from a slot of its own before the writing starts: making
            // a slot waits for the transactions running on the server, and under steady writing
            // for PostgreSQL's next snapshot of them (every 15 s) — a start-up cost, not the
            // fault under test.
            let streaming = try await eventually(timeout: .seconds(120)) {
                try await database.query("SELECT count(*) FROM pg_replication_slots WHERE active AND database = current_database()")[0]
                    .decode(Int.self, at: 0) == Self.workers
            }
            try #require(streaming, "the workers' feeds did not start streaming (seed \(seed)): \(lastSaid())")
        }
        try await database.query("UPDATE sync_control SET phase = 'go'")
        let faults = Task { try await fault() }
        let wroteLongEnough = try await all(said: "long enough")
        faults.cancel()
        let injected = try await faults.value
        try #require(wroteLongEnough, "workers did not write (seed \(seed)): \(lastSaid())")
        try await database.query("UPDATE sync_control SET phase = 'stop'")
        try #require(try await all(said: "written"), "workers did not stop writing (seed \(seed)): \(lastSaid())")
        try await database.query("UPDATE sync_control SET phase = 'check'")
        for child in children { #expect(await child.exit() == 0) }
        // The output is read on another thread, which may still be taking in the report line.
        try #require(try await eventually { lines.allSatisfy { $0.all.last?.first == "{" } }, "a worker printed no report (seed \(seed))")
        let reports = try lines.map { lines in
            try JSONDecoder().decode(Report.self, from: Data((lines.all.last ?? "").utf8))
        }
        try await check(reports, injected: injected)
        return reports
    }

    /// Every handle and live query converged and published only ordered, whole lists; no
    /// commit changed a column its writer did not edit; nothing confirmed was lost unreported.
    private func check(_ reports: [Report], injected: String) async throws {
        let audit = try await ConvergenceAudit(database, workers: Self.workers)
        let ownLost = try await audit.ownLost(reports)
        let unreportedLosses = audit.unreportedLosses(reports)
        let sum = { (figure: (Report) -> Int) in reports.map(figure).reduce(0, +) }
        print("""
            convergence (seed \(seed)\(composite ? ", composite key" : "")\(source == .notifications ? "" : ", logical replication")\(liveQuery ? "" : ", handles only")): \(Self.workers) processes × \(Self.rows) rows × \(Self.seconds) s: \
            \(sum(\.sets)) sets (\(sum(\.ownSets)) own column, \(sum(\.sharedConfirmed.count)) shared confirmed), \
            \(audit.commits) commits, conflicts thrown \(sum(\.conflictsThrown)), reported \(sum(\.conflictsReported)), \
            unreported losses \(unreportedLosses.count + ownLost.count), stale writes \(audit.staleWrites.count), \
            converged in \(reports.map(\.convergeMilliseconds).max() ?? -1) ms, \
            \(sum(\.bulkStatements)) statements flipping many rows, \(sum(\.listsChecked)) live-query lists checked, \
            \(injected) (\(sum(\.feedReconnects)) reconnects, \(sum(\.refreshesFailed)) re-reads cut, \
            \(sum(\.savesFailed)) saves failed)\(source == .notifications ? "" : ", \(sum(\.rowsFromStream)) rows taken from the stream")
            """)
        #expect(reports.allSatisfy { $0.converged }, "\(reports.compactMap(\.mismatch)) (seed \(seed))")
        #expect(audit.staleWrites.isEmpty, "\(audit.staleWrites.prefix(5)) (seed \(seed))")
        #expect(ownLost.isEmpty, "\(ownLost.prefix(5)) (seed \(seed))")
        let lossHistory = try await audit.history(of: unreportedLosses.first)
        #expect(unreportedLosses.isEmpty, "\(unreportedLosses.prefix(5)) (seed \(seed)); \(lossHistory)")
        let otherErrors = reports.flatMap(\.otherErrors)
        #expect(otherErrors.isEmpty, "\(otherErrors.prefix(5)) (seed \(seed))")
        #expect(sum(\.sets) > Self.workers * 10, "the workers barely wrote")
        #expect(!liveQuery || reports.allSatisfy { $0.listsChecked > 0 }, "a live query published nothing")
        #expect(source == .notifications || !requiresStreamedRows || sum(\.rowsFromStream) > 0, "no row was taken from the replication stream")
    }
}
