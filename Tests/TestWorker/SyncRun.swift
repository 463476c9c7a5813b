// `test-worker sync <index> <seconds> <seed> <databaseWins|localWins>` (DATABASE_URL: the test database):
// one writer process of the multi-process convergence test (Tests/RepositoryTests/Sync/ConvergenceTests).
//
// Holds live handles on every row of `sync_rows` — through `read(id:)` and through a live query —
// and, once the test sets phase 'go', writes for at least <seconds> (it says 'long enough' then)
// and until the test sets phase 'stop' (it says 'written' then): its own column `w<index>` and the
// shared column, at random rows, from three tasks at once, awaiting every save(); now and then
// one statement flips the shared column of many rows at once, which reverses their order in the
// live query. Every list the live query publishes meanwhile is checked: all rows, in order.
// Saves that fail (the test may restart the server) are counted, not fatal. Then it waits for
// phase 'check', waits until every handle equals the table, and prints one JSON line with what
// it did and saw. (The test's fault, such as a server restart, may end after <seconds>: the
// writes go on until it has.)
import Foundation
import IdentifiedCollections
import Repository

/// A row of `sync_rows` as a worker writes it, whatever the table's key.
protocol SyncRecord: Record, Equatable where ID: Comparable {
    /// The row's number (the `id` column).
    var number: Int64 { get }
    var shared: Int64 { get set }
    var w0: Int64 { get set }
    var w1: Int64 { get set }
    var w2: Int64 { get set }
    var w3: Int64 { get set }
    /// The key of row `number`.
    static func key(_ number: Int64) -> ID
}

/// `sync_rows` keyed by `id`.
struct SyncRow: SyncRecord {
    static let tableName = "sync_rows"
    var id: Int64
    var shared: Int64
    var w0: Int64
    var w1: Int64
    var w2: Int64
    var w3: Int64
    var number: Int64 { id }
    static func key(_ number: Int64) -> Int64 { number }
}

/// `sync_rows` keyed by `(tenant, id)`: the same test on a composite primary key.
struct TenantSyncRow: SyncRecord {
    static let tableName = "sync_rows"
    struct Key: Hashable, Codable, Sendable, Comparable {
        var tenant: String
        var id: Int64
        static func < (a: Key, b: Key) -> Bool { (a.tenant, a.id) < (b.tenant, b.id) }
    }
    var tenant: String
    var number: Int64
    var shared: Int64
    var w0: Int64
    var w1: Int64
    var w2: Int64
    var w3: Int64
    var id: Key { Key(tenant: tenant, id: number) }
    static func key(_ number: Int64) -> Key { Key(tenant: "acme", id: number) }
    enum CodingKeys: String, CodingKey { case tenant, number = "id", shared, w0, w1, w2, w3 }
}

struct Report: Codable {
    var worker: Int
    var policy: String
    var sets = 0
    var savesWaiting = 0                   // save() calls under way now (for the heartbeat)
    var ownSets = 0
    var sharedConfirmed: [[Int64]] = []  // [row, value, 1 if set through the live query] of shared writes whose save() returned
    var lastOwn: [String: Int64] = [:]    // row -> last value set in this worker's column
    var ownUnsettled: Set<String> = []     // rows whose last own value's save() failed (not a conflict)
    var bulkStatements = 0
    var listsChecked = 0
    var conflictsThrown = 0
    var savesFailed = 0                    // save() threw other than a conflict (a write cut by a restart)
    var writesFailed = 0                   // writes reported failed on `errors`
    var failures: [String] = []            // the first few of those, and of failed bulk statements
    var feedReconnects = 0
    var feedDisconnects = 0
    var refreshesFailed = 0  // re-reads on a listening connection cut under them
    var conflictsReported = 0
    var sharedReportedLost: [[Int64]] = []  // [row, value] of shared edits a reported conflict says lost
    var otherErrors: [String] = []
    var convergeMilliseconds = 0
    var rowsFromStream = 0                 // rows taken from the replication stream, with no read
    var converged = false
    var mismatch: String?
}

/// A little deterministic generator, so a seed replays the same choices.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

final class Log: @unchecked Sendable {  // every access is under `lock`
    private let lock = NSLock()
    private var report: Report
    private var counter: Int64
    init(_ report: Report, index: Int) {
        self.report = report
        counter = Int64(index + 1) * 1_000_000_000
    }
    func with<T>(_ body: (inout Report) -> T) -> T { lock.lock(); defer { lock.unlock() }; return body(&report) }
    /// A value no other write of any worker uses, set by `set` under the lock, so that the
    /// order of the values matches the order of the edits.
    func unique(_ set: (Int64, inout Report) -> Void) -> Int64 {
        lock.lock(); defer { lock.unlock() }
        counter += 1
        set(counter, &report)
        return counter
    }
}

/// The live query's published lists, checked: how many, and the first few that were wrong.
final class ListCheck: @unchecked Sendable {  // every access is under `lock`
    private let lock = NSLock()
    private var lists = 0
    private var errors: [String] = []
    func record(_ error: String?) {
        lock.lock(); defer { lock.unlock() }
        lists += 1
        if let error, errors.count < 5 { errors.append(error) }
    }
    func report(_ body: (Int, [String]) -> Void) { lock.lock(); defer { lock.unlock() }; body(lists, errors) }
}

/// A flag set once, read from any task.
final class Flag: @unchecked Sendable {  // `isSet` is only touched under `lock`
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
    func set() { lock.lock(); defer { lock.unlock() }; value = true }
}

/// Writes as one of the convergence test's processes (see the file's opening comment); a fifth
/// argument `composite` writes `sync_rows` keyed by `(tenant, id)`.
func sync(_ arguments: [String]) async throws {
    if arguments.count == 5, arguments[4] == "composite" { return try await sync(Array(arguments.prefix(4)), as: TenantSyncRow.self) }
    try await sync(arguments, as: SyncRow.self)
}

func sync<R: SyncRecord>(_ arguments: [String], as _: R.Type) async throws {
    guard arguments.count == 4, let index = Int(arguments[0]), let seconds = Double(arguments[1]), let seed = UInt64(arguments[2]) else {
        throw Usage("sync <index> <seconds> <seed> <databaseWins|localWins> [composite]")
    }
    let policy: ConflictPolicy = arguments[3] == "localWins" ? .localWins : .databaseWins
    let own: any WritableKeyPath<R, Int64> & Sendable = [\R.w0, \.w1, \.w2, \.w3][index]

    var configuration = try ConnectionConfiguration.environment()
    configuration.applicationName = "sync-worker-\(index)"  // the audit trigger records it
    let database = Database(configuration, maximumConnections: 4)
    let replication = ProcessInfo.processInfo.environment["SYNC_CHANGE_SOURCE"] == "logicalReplication"
    let repository = LiveRepository(database, conflictPolicy: policy, changes: replication ? .logicalReplication : .notifications)
    let log = Log(Report(worker: index, policy: arguments[3]), index: index)

    let errorWatcher = Task {
        for await error in repository.errors {
            log.with { report in
                switch error {
                case .changeFeedDisconnected: return report.feedDisconnects += 1
                case .changeFeedReconnected: return report.feedReconnects += 1
                case .refreshFailed: return report.refreshesFailed += 1
                case .writeFailed: return report.writesFailed += 1
                default: break
                }
                guard case .conflict(_, _, let columns, let ours, _, let policy) = error else {
                    return report.otherErrors.append("\(error)")
                }
                report.conflictsReported += 1
                if policy == .databaseWins, columns.contains("shared"), let ours = ours as? R {
                    report.sharedReportedLost.append([ours.number, ours.shared])
                }
            }
        }
    }

    func phase() async throws -> String {
        try await database.query("SELECT phase FROM sync_control")[0].decode(String.self, at: 0)
    }

    func wait(for wanted: String) async throws {
        // The server may be restarting: a failed poll is tried again.
        while (try? await phase()) != wanted { try await Task.sleep(for: .milliseconds(10)) }
    }

    let ids = try await database.query("SELECT id FROM sync_rows ORDER BY id").map { try $0.decode(Int64.self, at: 0) }
    var handles: [Int64: Var<R>] = [:]
    for id in ids { handles[id] = try await repository.read(R.self, id: R.key(id)) }
    // Without a live query (SYNC_LIVE_QUERY=0), the handles alone. With logical replication,
    // both take rows from the stream.
    let queries = ProcessInfo.processInfo.environment["SYNC_LIVE_QUERY"] != "0"
    let everyone = queries ? try await repository.readAll(R.self, orderBy: [.ascending(\.shared)]) : nil
    let rows = handles
    // Every list the live query publishes holds every row (none is deleted), ordered by the
    // shared column, then by id. Observers run on the setting thread, which may hold `log`'s
    // lock: the check keeps its own.
    let checked = ListCheck()
    let orderCheck = everyone?.observe { update in
        let list = update.new
        let ordered = zip(list, list.dropFirst()).allSatisfy { ($0.shared, $0.id) < ($1.shared, $1.id) }
        checked.record(ordered && list.count == ids.count ? nil : {
            let shown = list.map { "\($0.number):\($0.shared)" }.joined(separator: " ")
            return "the live query published \(list.count) of \(ids.count) rows, ordered: \(ordered): \(shown)"
        }())
    }
    say("ready")

    try await wait(for: "go")
    let deadline = ContinuousClock.now + .seconds(seconds)
    let stopped = Flag()
    // A line a second while writing, so a stuck worker shows where it is.
    let heartbeat = Task {
        while !Task.isCancelled {
            try await Task.sleep(for: .seconds(1))
            say(log.with { "writing: \($0.sets) sets, \($0.savesWaiting) save() calls waiting, \($0.savesFailed) failed" })
        }
    }
    let phaseWatch = Task {
        try await Task.sleep(until: deadline)
        say("long enough")
        try await wait(for: "stop")
        stopped.set()
    }
    await withTaskGroup(of: Void.self) { group in
        for task in 0..<3 {
            group.addTask {
                var random = SplitMix(state: seed &+ UInt64(task) &* 7919)
                while !stopped.isSet {
                    if Int.random(in: 0..<40, using: &random) == 0 {
                        // Every row (or every other one) at once: -v - 1 reverses their order,
                        // and no writer's values are negative, so it confirms no write.
                        let modulus = Int64.random(in: 1...3, using: &random) == 3 ? 2 : 1
                        do {
                            // The rows are locked in id order, as every such statement does: two never deadlock.
                            try await database.query("""
                                UPDATE sync_rows SET shared = -shared - 1
                                WHERE id IN (SELECT id FROM sync_rows WHERE id % $1 = 0 ORDER BY id FOR UPDATE)
                                """, [modulus])
                            log.with { $0.bulkStatements += 1 }
                        } catch {
                            log.with { if $0.failures.count < 5 { $0.failures.append("bulk statement: \(error)") } }
                        }
                        continue
                    }
                    let id = ids.randomElement(using: &random)!
                    let viaQuery = queries && Bool.random(using: &random)
                    let column: any WritableKeyPath<R, Int64> & Sendable = Int.random(in: 0..<5, using: &random) < 3 ? own : \.shared
                    let value = log.unique { value, report in
                        if viaQuery {
                            // A row that exists is always in an unconditional live query.
                            if everyone?.value[id: R.key(id)] == nil { report.otherErrors.append("the live query lacked row \(id)") }
                            everyone?[id: R.key(id)][column].value = value
                        } else {
                            rows[id]![column].value = value
                        }
                        report.sets += 1
                        if column == own {
                            report.ownSets += 1
                            report.lastOwn[String(id)] = value
                        }
                    }
                    log.with { $0.savesWaiting += 1 }
                    defer { log.with { $0.savesWaiting -= 1 } }
                    do {
                        try await (viaQuery ? everyone?.save() : rows[id]!.save())
                        log.with { report in
                            if column != own { report.sharedConfirmed.append([id, value, viaQuery ? 1 : 0]) }
                            if column == own, report.lastOwn[String(id)] == value { report.ownUnsettled.remove(String(id)) }
                        }
                    } catch LiveRecordError.conflict {
                        // A save() throws the first failure: its own edit may have failed too.
                        log.with { report in
                            report.conflictsThrown += 1
                            if column == own { report.ownUnsettled.insert(String(id)) }
                        }
                    } catch {
                        // A write cut by a server restart: reported, and reverted (or committed
                        // after all, when only its answer was lost).
                        log.with { report in
                            report.savesFailed += 1
                            if report.failures.count < 5 { report.failures.append("save: \(error)") }
                            if column == own { report.ownUnsettled.insert(String(id)) }
                        }
                    }
                }
            }
        }
    }
    try await phaseWatch.value
    heartbeat.cancel()
    say("written")

    // Every writer has stopped: each handle, and the live query, must come to equal the table.
    try await wait(for: "check")
    let started = ContinuousClock.now
    let convergenceDeadline = started + .seconds(120)  // a loaded machine; converging takes ms
    while true {
        let table = try await database.query("SELECT * FROM sync_rows ORDER BY id").decode(R.self)
        let held = ids.map { handles[$0]!.value }
        let listed = everyone?.value.elements.sorted { $0.id < $1.id } ?? table
        if held == table, listed == table {
            log.with { $0.converged = true }
            break
        }
        if ContinuousClock.now > convergenceDeadline {
            let differing = zip(held, table).filter { $0 != $1 }.prefix(3).map { "handle \($0) vs table \($1)" }
            let listedDiffers = zip(listed, table).filter { $0 != $1 }.prefix(3).map { "listed \($0) vs table \($1)" }
            let queryMismatch = listed == table ? "" : "; the live query differs (\(listed.count) of \(table.count) rows): \(listedDiffers.joined(separator: "; "))"
            log.with { $0.mismatch = differing.joined(separator: "; ") + queryMismatch }
            break
        }
        try await Task.sleep(for: .milliseconds(10))
    }
    let elapsed = ContinuousClock.now - started
    // Converged, perhaps before a feed cut late in the run listens again (nothing committed
    // since needed it): the report counts its reconnection once it comes.
    while log.with({ $0.feedDisconnects > 0 && $0.feedReconnects == 0 }), ContinuousClock.now < convergenceDeadline {
        try await Task.sleep(for: .milliseconds(10))
    }
    log.with { $0.rowsFromStream = repository.rowsFromStream }
    log.with { $0.convergeMilliseconds = Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000) }
    errorWatcher.cancel()
    orderCheck?.cancel()
    checked.report { lists, errors in log.with { $0.listsChecked = lists; $0.otherErrors += errors } }
    let json = try JSONEncoder().encode(log.with { $0 })
    say(String(decoding: json, as: UTF8.self))
}
