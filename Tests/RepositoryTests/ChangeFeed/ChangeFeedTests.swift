import Foundation
@testable import Repository
import Testing

/// Collects a feed's events as they arrive.
final class FeedLog: Sendable {
    let events = Recorder<ChangeFeedEvent>()
    private let task: Task<Void, Never>

    init(_ feed: ChangeFeed) {
        let events = events
        task = Task { for await event in feed.events { events.append(event) } }
    }

    var changes: [Change] {
        events.all.flatMap { event -> [Change] in
            guard case .changes(let batch) = event else { return [] }
            return batch
        }
    }
    var ignored: [String] { events.all.compactMap { if case .ignored(let payload, _) = $0 { payload } else { nil } } }
    func count(_ event: ChangeFeedEvent) -> Int { events.all.filter { $0 == event }.count }
    var disconnections: Int { events.all.filter { if case .disconnected = $0 { true } else { false } }.count }
    func finished() async { await task.value }
}

@Suite("Change feed")
struct ChangeFeedTests {
    let database: Database
    let configuration: ConnectionConfiguration

    init() async throws {
        let base = try await TestServer.makeDatabaseConfiguration()
        database = Database(base)
        // The feed's own application_name tells its backend apart from the pool's.
        var configuration = base
        configuration.applicationName = "feed-\(UInt32.random(in: 0...UInt32.max))"
        self.configuration = configuration
        try await migrateProject(database)
    }

    func insertPerson(_ name: String) async throws -> Int64 {
        try await database.query("INSERT INTO people (name) VALUES ($1) RETURNING id", [name])[0].decode(Int64.self, at: 0)
    }

    /// The row's version: the id of the transaction that wrote it (`xmin`).
    func version(of id: Int64) async throws -> Int64 {
        try await database.query("SELECT xmin::text::bigint FROM people WHERE id = $1", [id])[0].decode(Int64.self, at: 0)
    }

    @Test("a change committed by psql, another OS process, is announced with table, op, key and version")
    func psqlChange() async throws {
        let feed = ChangeFeed(configuration)
        let log = FeedLog(feed)
        #expect(try await eventually { log.count(.connected) == 1 })
        let id = try await insertPerson("Ada")
        let inserted = try await version(of: id)
        try await psql("UPDATE people SET name = 'Grace' WHERE id = \(id)", database: database)
        let expected = Change(table: "public.people", operation: .update, key: .integer(id), version: try await version(of: id))
        #expect(expected.version != inserted)
        #expect(try await eventually { log.changes.contains(expected) })
        #expect(log.changes.first == Change(table: "public.people", operation: .insert, key: .integer(id), version: inserted))
        feed.stop()
    }

    @Test("forged and malformed payloads are ignored and reported; none carries data anywhere")
    func forgedPayloads() async throws {
        let feed = ChangeFeed(configuration)
        let log = FeedLog(feed)
        #expect(try await eventually { log.count(.connected) == 1 })
        for payload in ["not json", #"{"table":"public.people"}"#, #"{"table":"public.people","op":"update","key":1,"version":"x"}"#,
                        #"{"table":"public.people","op":"truncate","key":1,"version":1}"#, #"{"table":"","op":"update","key":1,"version":1}"#,
                        #"{"table":"public.people","op":"update","key":1,"keys":[2],"version":1}"#, #"{"table":"public.people","op":"update","keys":[],"version":1}"#] {
            try await database.query("SELECT pg_notify('live_changes', $1)", [payload])
        }
        try await database.query("SELECT pg_notify('live_changes', $1)", [#"{"table":"public.people","op":"update","key":7,"version":9,"name":"Eve"}"#])
        #expect(try await eventually { log.ignored.count == 7 && log.changes.count == 1 })
        // A well-formed forgery is only a hint to re-read row 7: the name it carries goes nowhere.
        // Its version is of a shape from before migration 0005, which counted a `version` column: unknown.
        #expect(log.changes == [Change(table: "public.people", operation: .update, key: .integer(7), version: 0)])
        feed.stop()
    }

    @Test("a 10,000-row UPDATE is announced in parts under the payload limit and arrives as one batch")
    func burst() async throws {
        try await database.query("INSERT INTO people (name) SELECT 'p' || n FROM generate_series(1, 10000) AS n")
        let feed = ChangeFeed(configuration)
        let log = FeedLog(feed)
        let listener = try await RawListener(database: database.name(), channel: "live_changes")
        #expect(try await eventually { log.count(.connected) == 1 })
        let updater = try await database.query("WITH changed AS (UPDATE people SET name = name || '!' RETURNING xmin) SELECT DISTINCT xmin::text::bigint FROM changed")
        let transaction = try updater[0].decode(Int64.self, at: 0)
        #expect(try await eventually(timeout: .seconds(30)) { Set(log.changes.map(\.key)).count == 10_000 })
        let batches = log.events.all.filter { if case .changes = $0 { true } else { false } }.count
        var parts: [String] = []
        // Up to the part that says no more follow (or a 30 s gap, which fails below).
        while let payload = listener.next(timeout: .seconds(30)) {
            parts.append(payload)
            if !payload.contains(#""more":true"#) { break }
        }
        print("burst: a 10,000-row UPDATE sent \(parts.count) notifications and arrived in \(batches) change batch(es)")
        #expect(batches == 1)
        #expect(parts.count > 1 && parts.allSatisfy { $0.utf8.count <= 8000 })
        #expect(parts.dropLast().allSatisfy { $0.hasSuffix(#","more":true}"#) } && parts.last?.contains("more") == false)
        #expect(updater.count == 1 && log.changes.allSatisfy { $0.version == transaction && $0.operation == .update })
        feed.stop()
    }

    @Test("delete and insert of one key in one transaction fold into an insert; TRUNCATE is announced")
    func reincarnationAndTruncate() async throws {
        let feed = ChangeFeed(configuration)
        let log = FeedLog(feed)
        #expect(try await eventually { log.count(.connected) == 1 })
        let id = try await insertPerson("Ada")
        try await database.query("UPDATE people SET name = 'Ada L.' WHERE id = $1", [id])
        try await database.transaction { connection in
            try await connection.query("DELETE FROM people WHERE id = $1", [id])
            try await connection.query("INSERT INTO people (id, name) VALUES ($1, 'Ada again')", [id])
        }
        // Only the operation tells that this is another row; the insert, the transaction's
        // second announcing statement, says version 0.
        #expect(try await eventually { log.changes.last == Change(table: "public.people", operation: .insert, key: .integer(id), version: 0) })
        try await database.query("TRUNCATE people CASCADE")
        #expect(try await eventually { log.changes.contains { $0.operation == .truncate && $0.table == "public.people" } })
        feed.stop()
    }

    @Test("a terminated listening backend is reported, replaced, and listening resumes")
    func terminatedBackend() async throws {
        let feed = ChangeFeed(configuration)
        let log = FeedLog(feed)
        #expect(try await eventually { log.count(.connected) == 1 })
        try await TestServer.admin.value.query(
            "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE application_name = $1", [configuration.applicationName + " (change feed)"])
        // Not announced if it commits before the feed listens again; if it commits after, the
        // insert and the update below may arrive in one batch, folded into an insert.
        let id = try await insertPerson("during the outage")
        #expect(try await eventually { log.disconnections == 1 && log.count(.reconnected) == 1 })
        try await database.query("UPDATE people SET name = 'after' WHERE id = $1", [id])
        let after = try await version(of: id)
        #expect(try await eventually {
            log.changes.contains { $0.table == "public.people" && $0.key == .integer(id) && $0.version == after && $0.operation != .delete }
        }, "\(log.events.all)")
        feed.stop()
    }

    @Test("a server restart is survived: the feed reconnects and listens again")
    func serverRestart() async throws {
        let directory = FileManager.default.temporaryDirectory.path + "/feed-restart-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await LocalServer.start(.persistent(directory: directory))
        let local = Database(server.configuration)
        try await migrateProject(local)
        let feed = ChangeFeed(server.configuration, maximumBackoff: .milliseconds(500))
        let log = FeedLog(feed)
        #expect(try await eventually { log.count(.connected) == 1 })

        try await server.stop()
        #expect(try await eventually { log.disconnections == 1 })
        let restarted = try await LocalServer.start(.persistent(directory: directory))
        #expect(try await eventually { log.count(.reconnected) == 1 })
        try await local.query("INSERT INTO people (name) VALUES ('after restart')")
        #expect(try await eventually { log.changes.contains { $0.operation == .insert } })
        feed.stop()
        local.close()
        try await restarted.stop()
    }

    @Test("stop closes the connection and finishes the events")
    func stop() async throws {
        let feed = ChangeFeed(configuration)
        let log = FeedLog(feed)
        #expect(try await eventually { log.count(.connected) == 1 })
        feed.stop()
        feed.stop()
        await log.finished()
        #expect(try await eventually {
            try await TestServer.admin.value.query("SELECT 1 FROM pg_stat_activity WHERE application_name = $1", [configuration.applicationName + " (change feed)"]).isEmpty
        })
    }
}
