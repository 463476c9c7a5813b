import Foundation
@testable import Repository
import Testing

/// Rows from the replication stream are applied before their commits are known visible to new
/// snapshots (no round trip before observers hear of them); reads wait for that instead.
@Suite("Stream visibility")
struct StreamVisibilityTests {
    struct Note: Record, Equatable {
        static let tableName = "notes"
        var id: Int64
        var body: String
        var n: Int64
    }

    @Test("a read held while the feed applies rows gets a number after every row's, once released; reads not held are numbered at once")
    func heldReads() async throws {
        let sequence = ReadSequence()
        let before = await sequence.nextRead()
        sequence.holdReads()
        let held = Task { await sequence.nextRead() }
        #expect(try await eventually { sequence.waitingReads == 1 }, "the read did not wait")
        // The held read has no number yet: rows drawn now are numbered before it.
        var streamed: [UInt64] = []
        for _ in 0..<100 { streamed.append(sequence.next()) }
        sequence.holdReads()  // a second hold: releasing one is not enough
        sequence.releaseReads()
        streamed.append(sequence.next())
        #expect(sequence.waitingReads == 1, "one of two holds released the read")
        sequence.releaseReads()
        let number = await held.value
        #expect(before < streamed[0])
        #expect(streamed.allSatisfy { $0 < number }, "the held read got \(number), a streamed row \(streamed.max()!)")
        let after = await sequence.nextRead()
        #expect(after > number)
    }

    /// A database of its own with a published `notes` table.
    func publishedNotes() async throws -> (Database, ConnectionConfiguration) {
        var configuration = try await TestServer.makeDatabaseConfiguration(replication: true)
        configuration.applicationName = "visibility-\(UInt32.random(in: 0...UInt32.max))"
        let database = Database(configuration)
        try await database.withConnection { connection in
            try await connection.execute(script: """
                CREATE TABLE notes (id bigint PRIMARY KEY, body text NOT NULL, n bigint NOT NULL DEFAULT 0);
                INSERT INTO notes (id, body) VALUES (1, 'one'), (2, 'two');
                """)
        }
        try await LiveSchema.publish("notes", on: database)
        return (database, configuration)
    }

    @Test("a live query started the moment a streamed update is observed reads that update, 200 times in a row: the handle never falls back to the row before")
    func readAfterStreamedRow() async throws {
        let (database, configuration) = try await publishedNotes()
        defer { database.close() }
        let repository = LiveRepository(database, changes: .logicalReplication)
        defer { repository.close() }
        let one = try await repository.read(Note.self, id: 1)
        let queries = QueriesStartedOnHearing()
        let subscription = one.observe { update in
            queries.start(onHearing: update.new.n) {
                try await repository.readAll(Note.self, orderBy: [.ascending(\.id)]).value.first { $0.id == 1 }?.n
            }
        }
        defer { subscription.cancel() }
        try await queries.follow200Updates(configuration, shown: "the handle") { one.value.n }
    }

    /// Queries started from an observer on hearing each value `n` of row 1, and what each read
    /// for that row.
    final class QueriesStartedOnHearing: Sendable {
        let seen = Locked<[Int64: Int64]>([:])
        let failures = Locked<[String]>([])

        /// Starts `query` (what it reads of row 1) in a task of its own, on hearing `n`.
        func start(onHearing n: Int64, _ query: @escaping @Sendable () async throws -> Int64?) {
            guard n > 0 else { return }
            Task {
                do {
                    let read = try await query()
                    seen.withLock { $0[n] = read }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }

        /// Sets row 1's `n` to 1...200 from another connection, one at a time: after each, the
        /// query started on hearing it read it, and the live value (`shown`) holds it.
        func follow200Updates(_ configuration: ConnectionConfiguration, shown name: String, _ shown: () -> Int64?) async throws {
            let writer = Database(configuration, maximumConnections: 1)
            defer { writer.close() }
            for value: Int64 in 1...200 {
                try await writer.query("UPDATE notes SET n = $1 WHERE id = 1", [value])
                let done = try await eventually { seen.withLock { $0[value] } != nil || !failures.withLock { $0.isEmpty } }
                #expect(done && failures.withLock { $0.isEmpty }, "update \(value): \(failures.withLock { $0 })")
                let read = seen.withLock { $0[value] }, held = shown()
                #expect(read == value && held == value,
                        "update \(value): the query started on hearing it read \(String(describing: read)); \(name) holds \(String(describing: held))")
                if read != value || held != value { return }
            }
        }
    }
}

extension StreamVisibilityTests {
    struct Total: Decodable, Equatable, Sendable {
        var total: Int64
    }

    @Test("a live SQL query follows 200 streamed updates in a row: each re-run starts once the update is visible, so none ends on the value before")
    func liveSelectAfterStreamedRow() async throws {
        let (database, configuration) = try await publishedNotes()
        defer { database.close() }
        let repository = LiveRepository(database, changes: .logicalReplication)
        defer { repository.close() }
        let totals = try await repository.readAll(Total.self, sql: "SELECT sum(n)::bigint AS total FROM notes")
        let writer = Database(configuration, maximumConnections: 1)
        defer { writer.close() }
        for value: Int64 in 1...200 {
            try await writer.query("UPDATE notes SET n = $1 WHERE id = 1", [value])
            let arrived = try await eventually { totals.value.first?.total == value }
            #expect(arrived, "update \(value): the live query shows \(String(describing: totals.value.first))")
            if !arrived { return }
        }
    }
}

extension StreamVisibilityTests {
    @Test("a live record query takes 200 streamed updates as they come, and a query started from its observer on each reads that update: neither list falls back")
    func queryAfterStreamedRow() async throws {
        let (database, configuration) = try await publishedNotes()
        defer { database.close() }
        let repository = LiveRepository(database, changes: .logicalReplication)
        defer { repository.close() }
        let list = try await repository.readAll(Note.self, orderBy: [.ascending(\.id)])
        let queries = QueriesStartedOnHearing()
        let subscription = list.observe { update in
            guard let n = update.new.first(where: { $0.id == 1 })?.n else { return }
            queries.start(onHearing: n) {
                try await repository.readAll(Note.self, orderBy: [.descending(\.id)]).value.first { $0.id == 1 }?.n
            }
        }
        defer { subscription.cancel() }
        try await queries.follow200Updates(configuration, shown: "the list") { list.value.first { $0.id == 1 }?.n }
    }
}

extension StreamVisibilityTests {
    @Test("a write based on a streamed row whose commit is not visible yet waits for it: it is not refused as matching no row, and both edits are kept")
    func writeOnRowNotYetVisible() async throws {
        // A server of its own: while synchronous_standby_names names a standby that never
        // comes, a commit is flushed (and streamed) but not visible until the setting goes.
        try await LocalServer.withThrowaway { server in
            let admin = Database(server.configuration, maximumConnections: 1)
            defer { admin.close() }
            try await admin.query("CREATE TABLE notes (id bigint PRIMARY KEY, body text NOT NULL, n bigint NOT NULL DEFAULT 0)")
            try await admin.query("INSERT INTO notes (id, body) VALUES (1, 'one')")
            try await LiveSchema.publish("notes", on: admin)
            let repository = LiveRepository(Database(server.configuration), changes: .logicalReplication)
            defer { repository.close() }
            let one = try await repository.read(Note.self, id: 1)
            // Streaming: its slot is made (which would wait for the transaction below to end).
            try await admin.query("UPDATE notes SET body = 'streaming' WHERE id = 1")
            #expect(try await eventually { one.value.body == "streaming" })
            try await admin.query("ALTER SYSTEM SET synchronous_standby_names = 'nobody'")
            try await admin.query("SELECT pg_reload_conf()")
            let writer = Database(server.configuration, maximumConnections: 1)
            defer { writer.close() }
            #expect(try await eventually { try await writer.query("SHOW synchronous_standby_names")[0].decode(String.self, at: 0) == "nobody" })
            let theirs = Task { try await writer.query("UPDATE notes SET body = 'theirs' WHERE id = 1") }  // waits for the standby
            #expect(try await eventually { one.value.body == "theirs" }, "the streamed row was not taken")
            one.value.n = 5
            let saved = Task { try await one.save() }
            #expect(try await eventually { repository.sequence.waitingReads >= 1 }, "nothing waited for the commit to be visible")
            try await admin.query("ALTER SYSTEM RESET synchronous_standby_names")
            try await admin.query("SELECT pg_reload_conf()")
            _ = try await theirs.value
            try await saved.value
            let row = try await admin.query("SELECT body, n FROM notes WHERE id = 1")[0]
            #expect(try row.decode(String.self, at: 0) == "theirs" && row.decode(Int64.self, at: 1) == 5)
        }
    }
}
