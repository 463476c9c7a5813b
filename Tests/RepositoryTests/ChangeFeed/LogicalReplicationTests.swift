import Foundation
import IdentifiedCollections
@testable import Repository
import Testing

/// Changes through PostgreSQL's logical replication (`ChangeSource.logicalReplication`), on
/// tables with no triggers: published, and followed by live values as with notifications.
@Suite("Logical replication")
struct LogicalReplicationTests {
    struct Note: Record, Equatable {
        static let tableName = "notes"
        var id: Int64
        var body: String
        var n: Int64
    }

    let database: Database
    let configuration: ConnectionConfiguration

    init() async throws {
        var configuration = try await TestServer.makeDatabaseConfiguration(replication: true)
        // The feed's own application_name tells its backends apart from the pool's.
        configuration.applicationName = "replication-\(UInt32.random(in: 0...UInt32.max))"
        self.configuration = configuration
        database = Database(configuration)
        try await database.withConnection { connection in
            try await connection.execute(script: """
                CREATE TABLE notes (id bigint PRIMARY KEY, body text NOT NULL, n bigint NOT NULL DEFAULT 0);
                INSERT INTO notes (id, body) VALUES (1, 'one'), (2, 'two');
                -- The key's columns in another order than the table's.
                CREATE TABLE members (user_id text, project_id bigint, role text NOT NULL, PRIMARY KEY (project_id, user_id));
                INSERT INTO members VALUES ('grace', 7, 'viewer');
                """)
        }
        try await LiveSchema.publish("notes", on: database)
        try await LiveSchema.publish("members", on: database)
    }

    func xmin(_ id: Int64) async throws -> Int64 {
        try await database.query("SELECT xmin::text::bigint FROM notes WHERE id = $1", [id])[0].decode(Int64.self, at: 0)
    }

    @Test("the feed announces psql's inserts, updates, deletes and truncates with table, key and version; a changed key is a delete and an insert; no triggers are installed")
    func announcements() async throws {
        let feed = ChangeFeed(configuration, source: .logicalReplication)
        defer { feed.stop() }
        let log = FeedLog(feed)
        #expect(try await eventually { log.count(.connected) == 1 })
        #expect(try await database.query("SELECT count(*) FROM pg_trigger WHERE tgrelid IN ('notes'::regclass, 'members'::regclass)")[0].decode(Int64.self, at: 0) == 0)

        try await psql("UPDATE notes SET body = 'uno' WHERE id = 1", database: database)
        let updated = Change(table: "public.notes", operation: .update, key: .integer(1), version: try await xmin(1))
        #expect(try await eventually { log.changes.contains(updated) }, "\(log.changes)")

        try await psql("INSERT INTO notes (id, body) VALUES (3, 'three'); DELETE FROM notes WHERE id = 2", database: database)
        #expect(try await eventually { log.changes.contains { $0.operation == .delete && $0.key == .integer(2) } })
        #expect(log.changes.contains { $0.operation == .insert && $0.key == .integer(3) && $0.table == "public.notes" })

        try await psql("UPDATE members SET user_id = 'hopper' WHERE project_id = 7", database: database)
        #expect(try await eventually { log.changes.contains { $0.operation == .insert && $0.key == .composite([.integer(7), .text("hopper")]) } })
        #expect(log.changes.contains { $0.operation == .delete && $0.key == .composite([.integer(7), .text("grace")]) })

        // One transaction changing a row twice: its version is unknown (0), not the transaction's.
        try await psql("BEGIN; UPDATE notes SET n = 1 WHERE id = 3; UPDATE notes SET n = 2 WHERE id = 3; COMMIT", database: database)
        #expect(try await eventually { log.changes.contains { $0.key == .integer(3) && $0.operation == .update && $0.version == 0 } })

        try await psql("TRUNCATE members", database: database)
        #expect(try await eventually { log.changes.contains { $0.operation == .truncate && $0.table == "public.members" } })
    }

    @Test("live records and queries follow psql with no triggers: a savepoint's update, a 1 MB value an update leaves alone, a table published while running; writes and conflicts work")
    func liveValues() async throws {
        let repository = LiveRepository(database, changes: .logicalReplication)
        defer { repository.close() }
        let one = try await repository.read(Note.self, id: 1)
        let all = try await repository.readAll(Note.self, orderBy: [.ascending(\.id)])

        // Written in a subtransaction: the row's xmin is the subtransaction's, not the announced one.
        try await psql("BEGIN; SAVEPOINT s; UPDATE notes SET body = 'in a savepoint' WHERE id = 1; RELEASE s; COMMIT", database: database)
        #expect(try await eventually { one.value.body == "in a savepoint" && all.value[id: 1]?.body == "in a savepoint" })

        // A TOASTed value the update does not touch is not in the stream: the row is read again.
        let big = String(repeating: "x", count: 1_000_000)
        try await psql("INSERT INTO notes (id, body) VALUES (9, repeat('x', 1000000))", database: database)
        #expect(try await eventually { all.value[id: 9]?.body == big })
        let nine = try await repository.read(Note.self, id: 9)
        try await psql("UPDATE notes SET n = 42 WHERE id = 9", database: database)
        #expect(try await eventually { nine.value.n == 42 && all.value[id: 9]?.n == 42 })
        #expect(nine.value.body == big)

        try await psql("DELETE FROM notes WHERE id = 2", database: database)
        #expect(try await eventually { all.value.ids.elements == [1, 9] })

        // Writes go through, changed columns only, with their optimistic check.
        one[\.n].value = 5
        try await one.save()
        #expect(try await database.query("SELECT n FROM notes WHERE id = 1")[0].decode(Int64.self, at: 0) == 5)
        try await commitUnderneath(database, "UPDATE notes SET n = 6 WHERE id = 1") { one[\.n].value = 7 }
        await #expect(throws: LiveRecordError.self) { try await one.save() }
        #expect(try await eventually { one.value.n == 6 })

        // A table published after the repository started.
        try await database.query("CREATE TABLE later (id bigint PRIMARY KEY, body text NOT NULL, n bigint NOT NULL DEFAULT 0)")
        try await database.query("INSERT INTO later VALUES (1, 'first', 0)")
        try await LiveSchema.publish("later", on: database)
        struct Later: Record, Equatable { static let tableName = "later"; var id: Int64; var body: String; var n: Int64 }
        let first = try await repository.read(Later.self, id: 1)
        try await psql("UPDATE later SET body = 'followed' WHERE id = 1", database: database)
        #expect(try await eventually { first.value.body == "followed" })
    }

    @Test("after the replication connection is cut, the feed resumes its slot: what was committed meanwhile arrives, and no other row is read again; shutdown returns once the slot is dropped, and a read after it is refused")
    func resumeAfterOutage() async throws {
        try await database.query("INSERT INTO notes (id, body) SELECT i, 'row ' || i FROM generate_series(10, 59) AS i")
        let repository = LiveRepository(database, changes: .logicalReplication)
        let events = Recorder<LiveRecordError>()
        let stream = repository.errors  // subscribed now, not when the task runs
        let watcher = Task { for await error in stream { events.append(error) } }
        defer { watcher.cancel() }
        var handles: [Var<Note>] = []
        for id in 10...59 { handles.append(try await repository.read(Note.self, id: Int64(id))) }
        let slots = "SELECT count(*) FROM pg_replication_slots WHERE database = current_database()"
        #expect(try await database.query(slots)[0].decode(Int64.self, at: 0) == 1)
        for round in 1...3 {
            let rowsBefore = repository.reads.withLock { $0.rows }
            try await database.query("SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE '% (change feed)'",
                                     [database.name()])
            // Committed while the feed is down (or coming back): it arrives from the slot.
            try await psql("UPDATE notes SET body = 'round \(round)' WHERE id = 10", database: database)
            #expect(try await eventually { handles[0].value.body == "round \(round)" && events.all.count(where: { if case .changeFeedReconnected = $0 { true } else { false } }) == round })
            let reread = repository.reads.withLock { $0.rows } - rowsBefore
            #expect(reread <= 2, "round \(round): \(reread) rows read again after the outage, of 50 live rows")
        }
        #expect(try await database.query(slots)[0].decode(Int64.self, at: 0) == 1, "the same slot, resumed")
        await repository.shutdown()
        #expect(try await database.query(slots)[0].decode(Int64.self, at: 0) == 0, "shutdown() returned with the slot still there")
        let refused = await #expect(throws: PostgresError.self) { try await repository.read(Note.self, id: 11) }
        #expect(refused?.kind == .closed && "\(refused.map { "\($0)" } ?? "")".contains("closed"), "\(String(describing: refused))")
    }

    @Test("a slot a dead process left behind is dropped by the next feed once it holds back more WAL than allowed; others' slots are left alone")
    func abandonedSlots() async throws {
        try await database.query("SELECT pg_create_logical_replication_slot('live_feed_1_1', 'pgoutput')")
        try await database.query("SELECT pg_create_logical_replication_slot('someone_elses', 'pgoutput')")
        try await database.query("INSERT INTO notes (id, body) SELECT i, 'row ' || i FROM generate_series(100, 199) AS i")
        let repository = LiveRepository(database, changes: .logicalReplication(abandonAfter: 1))
        defer { repository.close() }
        _ = try await repository.read(Note.self, id: 1)
        let names = "SELECT slot_name FROM pg_replication_slots WHERE database = current_database() ORDER BY slot_name"
        #expect(try await eventually {
            let slots = try await database.query(names).map { try $0.decode(String.self, at: 0) }
            return !slots.contains("live_feed_1_1") && slots.contains("someone_elses") && slots.count == 2
        })
        try await database.query("SELECT pg_drop_replication_slot('someone_elses')")
    }

    @Test("a role without the REPLICATION attribute gets a one-line error naming it, and the feed keeps trying: once the role may, it says it listens again")
    func roleWithoutReplication() async throws {
        let role = "plain_\(UInt32.random(in: 0...UInt32.max))"
        try await database.query("CREATE ROLE \(role) LOGIN PASSWORD 'role-pw'")
        try await database.query("GRANT ALL ON notes TO \(role)")
        let feed = ChangeFeed(configuration.user(role, password: "role-pw"), source: .logicalReplication)
        defer { feed.stop() }
        let log = FeedLog(feed)
        #expect(try await eventually { log.disconnections == 1 })
        let error = log.events.all.compactMap { if case .disconnected(let error) = $0 { error } else { nil } }.first
        let message = "\(error.map { "\($0)" } ?? "")"
        #expect(message.contains("lacks the REPLICATION attribute") && message.contains("ALTER ROLE \"\(role)\" WITH REPLICATION") && !message.contains("\n"), "\(message)")
        // Once the role may replicate, the feed says it listens — again, as far as anyone was told.
        try await database.query("ALTER ROLE \(role) WITH REPLICATION")
        #expect(try await eventually { log.count(.reconnected) == 1 })
        #expect(log.count(.connected) == 0 && log.disconnections == 1)
    }
}

extension LogicalReplicationTests {
    @Test("300 updates in a row by another connection, each waited for: every one arrives — the stream sends a commit a moment before it is visible, and the re-read waits for that")
    func manyUpdatesInARow() async throws {
        let repository = LiveRepository(database, changes: .logicalReplication)
        defer { repository.close() }
        let one = try await repository.read(Note.self, id: 1)
        let writer = Database(configuration, maximumConnections: 1)
        defer { writer.close() }
        for value in 1...300 {
            try await writer.query("UPDATE notes SET n = $1 WHERE id = 1", [value])
            let arrived = try await eventually { one.value.n == Int64(value) }
            #expect(arrived, "update \(value) did not arrive: the handle holds \(one.value.n)")
            if !arrived { return }
        }
    }
}

extension LogicalReplicationTests {
    @Test("300 updates in a row through the feed alone: each arrives, with its transaction's id as version")
    func feedUpdatesInARow() async throws {
        let feed = ChangeFeed(configuration, source: .logicalReplication)
        defer { feed.stop() }
        let log = FeedLog(feed)
        #expect(try await eventually { log.count(.connected) == 1 })
        let writer = Database(configuration, maximumConnections: 1)
        defer { writer.close() }
        for value in 1...300 {
            let version = try await writer.query("UPDATE notes SET n = $1 WHERE id = 1 RETURNING xmin::text::bigint", [value])[0].decode(Int64.self, at: 0)
            let arrived = try await eventually { log.changes.contains { $0.version == version } }
            #expect(arrived, "update \(value) (version \(version)) did not arrive; last: \(log.changes.suffix(2)); events: \(log.events.all.suffix(3))")
            if !arrived { return }
        }
    }
}

extension LogicalReplicationTests {
    @Test("a partitioned table is followed as itself; a replica identity on another index still finds rows by key; publish refuses keys changes cannot name")
    func tableShapes() async throws {
        try await database.withConnection { connection in
            try await connection.execute(script: """
                CREATE TABLE events (id bigint, region text, body text NOT NULL, PRIMARY KEY (id, region)) PARTITION BY LIST (region);
                CREATE TABLE events_eu PARTITION OF events FOR VALUES IN ('eu');
                CREATE TABLE events_us PARTITION OF events FOR VALUES IN ('us');
                INSERT INTO events VALUES (1, 'eu', 'first'), (2, 'us', 'second');
                CREATE TABLE accounts (id bigint PRIMARY KEY, email text NOT NULL UNIQUE, balance bigint NOT NULL);
                ALTER TABLE accounts REPLICA IDENTITY USING INDEX accounts_email_key;
                INSERT INTO accounts VALUES (1, 'ada@example.com', 10), (2, 'grace@example.com', 20);
                CREATE TABLE priced (price numeric PRIMARY KEY);
                """)
        }
        try await LiveSchema.publish("events", on: database)
        try await LiveSchema.publish("accounts", on: database)
        let refused = await #expect(throws: PostgresError.self) { try await LiveSchema.publish("priced", on: database) }
        #expect("\(refused.map { "\($0)" } ?? "")".contains("price (numeric)"))

        struct Event: Record, Equatable {
            static let tableName = "events"
            struct Key: Hashable, Codable, Sendable, Comparable {
                var id: Int64
                var region: String
                static func < (a: Key, b: Key) -> Bool { (a.id, a.region) < (b.id, b.region) }
            }
            var id: Key { Key(id: eventId, region: region) }
            var eventId: Int64
            var region: String
            var body: String
            enum CodingKeys: String, CodingKey { case eventId = "id", region, body }
        }
        struct Account: Record, Equatable { static let tableName = "accounts"; var id: Int64; var email: String; var balance: Int64 }
        let repository = LiveRepository(database, changes: .logicalReplication)
        defer { repository.close() }
        let events = try await repository.readAll(Event.self, orderBy: [.ascending(\.eventId)])
        let ada = try await repository.read(Account.self, id: 1)
        let accounts = try await repository.readAll(Account.self, orderBy: [.ascending(\.id)])
        try await psql("UPDATE events SET body = 'changed' WHERE id = 1; INSERT INTO events VALUES (3, 'us', 'third')", database: database)
        #expect(try await eventually { events.value.map(\.body) == ["changed", "second", "third"] })
        try await psql("UPDATE accounts SET balance = 11 WHERE id = 1; DELETE FROM accounts WHERE id = 2", database: database)
        #expect(try await eventually { ada.value.balance == 11 && accounts.value.ids.elements == [1] })
        // A key change that leaves the identity's column alone arrives without the old key: the
        // old row must still leave.
        try await psql("UPDATE accounts SET id = 97 WHERE id = 1", database: database)
        #expect(try await eventually { accounts.value.ids.elements == [97] && ada.liveState == .deleted }, "\(accounts.value.ids.elements)")
        // One partition truncated alone, which pgoutput leaves out of a stream that publishes
        // the root: its rows leave all the same (a stranger's run saw them stay, for good).
        let first = try await repository.read(Event.self, id: .init(id: 1, region: "eu"))
        try await psql("TRUNCATE events_eu", database: database)
        #expect(try await eventually { events.value.map(\.body) == ["second", "third"] && first.liveState == .deleted }, "\(events.value.map(\.body))")
        // A partition added later is covered once the table is published again.
        try await psql("CREATE TABLE events_ap PARTITION OF events FOR VALUES IN ('ap'); INSERT INTO events VALUES (4, 'ap', 'fourth')", database: database)
        #expect(try await eventually { events.value.map(\.body) == ["second", "third", "fourth"] })
        try await LiveSchema.publish("events", on: database)
        try await psql("TRUNCATE events_ap", database: database)
        #expect(try await eventually { events.value.map(\.body) == ["second", "third"] })
    }
}

extension LogicalReplicationTests {
    @Test("publish refuses a table with REPLICA IDENTITY NOTHING, saying why in one line")
    func replicaIdentityNothing() async throws {
        try await database.query("CREATE TABLE silent (id bigint PRIMARY KEY, body text)")
        try await database.query("ALTER TABLE silent REPLICA IDENTITY NOTHING")
        let refused = await #expect(throws: PostgresError.self) { try await LiveSchema.publish("silent", on: database) }
        let message = refused.map { "\($0)" } ?? ""
        #expect(message.contains("REPLICA IDENTITY NOTHING") && !message.contains("\n"), "\(message)")
    }

    @Test("a server whose synchronous_standby_names is '*' is refused in one line (commits would wait for the feed that waits for them), and nothing is written")
    func everyStandbySynchronous() async throws {
        // A server of its own: the setting makes every commit there wait for a standby.
        let server = try await LocalServer.start()
        let database = Database(server.configuration, maximumConnections: 1)
        try await database.query("CREATE TABLE notes (id bigint PRIMARY KEY, body text)")
        try await database.query("ALTER SYSTEM SET synchronous_standby_names = '*'")
        try await database.query("SELECT pg_reload_conf()")
        #expect(try await eventually { try await database.query("SHOW synchronous_standby_names")[0].decode(String.self, at: 0) == "*" })
        let feed = ChangeFeed(server.configuration, source: .logicalReplication)
        let log = FeedLog(feed)
        #expect(try await eventually { log.disconnections >= 1 })
        feed.stop()
        let error = log.events.all.compactMap { if case .disconnected(let error) = $0 { error } else { nil } }.first
        let message = error.map { "\($0)" } ?? ""
        #expect(message.contains("synchronous_standby_names") && message.contains("'*'") && !message.contains("\n"), "\(message)")
        let made = try await database.query("SELECT (SELECT count(*) FROM pg_publication) + (SELECT count(*) FROM pg_replication_slots)")[0].decode(Int.self, at: 0)
        #expect(made == 0, "a publication or slot was made")
        database.close()
        try await server.stop()
    }
}

extension LogicalReplicationTests {
    @Test("a publication dropped and made again while changes were still to be decoded: the slot cannot go on, so the feed starts a new one and live values follow again")
    func publicationDroppedAndMadeAgain() async throws {
        let repository = LiveRepository(database, changes: .logicalReplication)
        defer { repository.close() }
        let note = try await repository.read(Note.self, id: 1)
        try await psql("UPDATE notes SET n = 1 WHERE id = 1", database: database)
        #expect(try await eventually { note.value.n == 1 })
        // Each its own transaction: the slot decodes the UPDATE with the catalog of its time, which has no publication.
        try await database.query("DROP PUBLICATION live_changes")
        try await database.query("UPDATE notes SET n = 2 WHERE id = 1")
        try await LiveSchema.publish("notes", on: database)
        try await LiveSchema.publish("members", on: database)
        try await database.query("UPDATE notes SET n = 3 WHERE id = 1")
        #expect(try await eventually { note.value.n == 3 }, "\(note.value)")
    }

    @Test("a slot dropped while the feed was away: the next session makes a new one, reads the live values again, and follows from then on (a stranger's run: it retried the gone slot forever)")
    func slotDroppedDuringOutage() async throws {
        let role = "feed_\(UInt32.random(in: 0...UInt32.max))"
        try await database.query("CREATE ROLE \(role) LOGIN REPLICATION")
        try await database.query("GRANT ALL ON notes TO \(role)")
        let own = Database(configuration.user(role), maximumConnections: 2)
        defer { own.close() }
        let repository = LiveRepository(own, changes: .logicalReplication)
        defer { repository.close() }
        let note = try await repository.read(Note.self, id: 1)
        try await psql("UPDATE notes SET n = 1 WHERE id = 1", database: database)
        #expect(try await eventually { note.value.n == 1 })
        let slots = "SELECT slot_name FROM pg_replication_slots WHERE database = current_database()"
        let first = try await database.query(slots).map { try $0.decode(String.self, at: 0) }
        #expect(first.count == 1)
        // Away: it cannot log in again until its slot is gone.
        try await database.query("ALTER ROLE \(role) NOLOGIN")
        try await database.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1", [role])
        #expect(try await eventually {
            try await database.query("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = current_database() AND NOT active").count == 1
        })
        try await database.query("UPDATE notes SET n = 2 WHERE id = 1")  // committed with no slot: read again
        try await database.query("ALTER ROLE \(role) LOGIN")
        #expect(try await eventually { note.value.n == 2 }, "\(note.value)")
        try await psql("UPDATE notes SET n = 3 WHERE id = 1", database: database)  // through the new slot
        #expect(try await eventually { note.value.n == 3 }, "\(note.value)")
        let second = try await database.query(slots).map { try $0.decode(String.self, at: 0) }
        #expect(second.count == 1 && second != first, "\(first) then \(second)")
    }

    @Test("a publication that leaves out deletes is refused by publish and by reads, in one line naming the fix; publish succeeds on a publication FOR ALL TABLES")
    func publicationShapes() async throws {
        try await database.query("CREATE PUBLICATION partial FOR TABLE notes WITH (publish = 'insert, update')")
        let refused = await #expect(throws: PostgresError.self) { try await LiveSchema.publish("notes", on: database, publication: "partial") }
        let message = refused.map { "\($0)" } ?? ""
        #expect(message.contains("leaves out some of inserts, updates, deletes and truncates") && !message.contains("\n"), "\(message)")
        let repository = LiveRepository(database, changes: .logicalReplication(publication: "partial"))
        defer { repository.close() }
        let read = await #expect(throws: PostgresError.self) { try await repository.read(Note.self, id: 1) }
        #expect((read.map { "\($0)" } ?? "").contains("SET (publish = 'insert, update, delete, truncate')"), "\(read.map { "\($0)" } ?? "")")

        try await database.query("CREATE PUBLICATION everything FOR ALL TABLES")
        try await LiveSchema.publish("notes", on: database, publication: "everything")
    }
}
