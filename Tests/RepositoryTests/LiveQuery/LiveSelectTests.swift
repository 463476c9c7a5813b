import AddressBookKit
import Foundation
import IdentifiedCollections
@testable import Repository
import Testing

/// Live results of any query: a join with a count, re-run when either table changes, equal to
/// running the query again after each step.
@Suite("Live queries over any SELECT")
struct LiveSelectTests {
    struct Tally: Decodable, Equatable, Sendable, Identifiable {
        var id: Int64
        var name: String
        var addresses: Int
    }

    static let tallySQL = """
        SELECT p.id, p.name, count(a.id)::int AS addresses FROM people p LEFT JOIN addresses a ON a.person_id = p.id
        WHERE p.name LIKE $1 GROUP BY p.id ORDER BY p.name COLLATE "C", p.id
        """

    let database: Database
    let repository: LiveRepository

    init() async throws {
        database = try await TestServer.makeDatabase()
        try await AddressBook.migrate(database)
        repository = LiveRepository(database)
    }

    func rerun() async throws -> [Tally] {
        try await database.query(Self.tallySQL, ["%"]).decode(Tally.self)
    }

    @Test("a join with a count follows inserts, updates and deletes in either table; each step equals a re-run")
    func joinFollows() async throws {
        let tallies = try await repository.readAll(Tally.self, sql: Self.tallySQL, parameters: ["%"])
        let updates = Recorder<CollectionChanges<Int64>>()
        let subscription = tallies.observe { updates.append($0.changes()) }
        let steps = [
            "INSERT INTO people (id, name) VALUES (1, 'Ada'), (2, 'Grace')",
            "INSERT INTO addresses (person_id, position, street) VALUES (1, 0, 'London'), (1, 1, 'Ockham'), (2, 0, 'Arlington')",
            "UPDATE people SET name = 'Amazing Grace' WHERE id = 2",
            "DELETE FROM addresses WHERE street = 'Ockham'",
            "UPDATE addresses SET person_id = 2 WHERE street = 'London'",
            "DELETE FROM people WHERE id = 1",
            "TRUNCATE addresses",
        ]
        for step in steps {
            try await psql(step, database: database)
            let expected = try await rerun()
            #expect(try await eventually { tallies.value.elements == expected }, "after \(step): \(tallies.value.elements) vs \(expected)")
        }
        #expect(updates.all.contains(CollectionChanges(updated: [2])))
        #expect(updates.all.allSatisfy { !$0.isEmpty })              // published only when the result differs
        subscription.cancel()
    }

    @Test("a burst of 300 changes costs a few runs, not 300; an unrelated table costs none")
    func coalesced() async throws {
        try await database.query("CREATE TABLE unrelated (id int PRIMARY KEY)")
        try await LiveSchema.enable("unrelated", on: database)
        let tallies = try await repository.readAll(Tally.self, sql: Self.tallySQL, parameters: ["%"])
        let before = repository.rowQueries
        for index in 0..<300 {
            try await database.query("INSERT INTO people (name) VALUES ($1)", ["p\(index)"])
        }
        #expect(try await eventually { tallies.value.count == 300 })
        let runs = repository.rowQueries - before
        print("300 single-row inserts, one at a time: \(runs) runs of the live query")
        #expect(runs < 300)
        let quiet = repository.rowQueries
        try await database.query("INSERT INTO unrelated SELECT generate_series(1, 50)")
        try await database.query("UPDATE people SET name = name WHERE false")     // announces nothing: no row changed
        try await database.query("INSERT INTO people (name) VALUES ('last')")
        #expect(try await eventually { tallies.value.count == 301 })
        #expect(repository.rowQueries - quiet <= 2)
    }

    @Test("plain rows; a query that writes, or reads a table whose changes are not announced, is refused in one line")
    func refusals() async throws {
        struct Name: Decodable, Equatable, Sendable { var name: String }
        let names = try await repository.readAll(Name.self, sql: "SELECT name FROM people ORDER BY name")
        try await database.query("INSERT INTO people (name) VALUES ('Zed')")
        #expect(try await eventually { names.value == [Name(name: "Zed")] })
        // Explicit CodingKeys naming a mixed-case column, read with exact naming.
        struct Spelled: Decodable, Equatable, Sendable {
            var userName: String
            enum CodingKeys: String, CodingKey { case userName = "userName" }
        }
        let spelled = try await repository.readAll(Spelled.self, sql: #"SELECT name AS "userName" FROM people"#, columns: .exact)
        #expect(spelled.value == [Spelled(userName: "Zed")])
        try await database.query("CREATE TABLE quiet (name text)")
        let silent = await #expect(throws: PostgresError.self) { try await repository.readAll(Name.self, sql: "SELECT name FROM quiet") }
        #expect(silent?.message.contains("public.quiet, whose changes are not announced") == true)
        let writes = await #expect(throws: PostgresError.self) {
            try await repository.readAll(Name.self, sql: "WITH x AS (INSERT INTO people (name) VALUES ('sneaky') RETURNING name) SELECT name FROM x")
        }
        #expect(writes?.message.contains("must only read") == true)
        let locks = await #expect(throws: PostgresError.self) {
            try await repository.readAll(Name.self, sql: "SELECT name FROM people FOR UPDATE")
        }
        #expect(locks?.message.hasPrefix("a live query must only read: this one locks rows") == true, "\(String(describing: locks))")
        #expect(try await database.query("SELECT count(*) FROM people WHERE name = 'sneaky'")[0].decode(Int.self, at: 0) == 0)
    }

    @Test("writes a plan does not show are refused by the read-only first run, changing nothing; a query of system catalogs alone, or of no table, is refused; one joining a catalog is followed")
    func hiddenWritesAndSilentTables() async throws {
        struct Name: Decodable, Equatable, Sendable { var name: String }
        struct Count: Decodable, Equatable, Sendable { var c: Int }
        try await database.query("CREATE SEQUENCE tally")
        try await database.query("INSERT INTO people (name) VALUES ('Ada')")  // nextval runs per row
        for sql in ["SELECT name INTO copied FROM people", "SELECT nextval('tally')::text AS name FROM people"] {
            let refused = await #expect(throws: PostgresError.self) { try await repository.readAll(Name.self, sql: sql) }
            #expect(refused?.message.hasPrefix("a live query must only read: this one writes — cannot execute") == true, "\(String(describing: refused))")
        }
        #expect(try await database.query("SELECT to_regclass('copied') IS NULL")[0].decode(Bool.self, at: 0))
        for (sql, read) in [("SELECT count(*)::int AS c FROM pg_class", "only system catalogs (\"pg_catalog\".\"pg_class\")"),
                            ("SELECT 1 AS c", "no table")] {
            let refused = await #expect(throws: PostgresError.self) { try await repository.readAll(Count.self, sql: sql) }
            #expect(refused?.message.hasPrefix("a live query must read a table whose changes are announced, or it never changes: this one reads \(read)") == true,
                    "\(String(describing: refused))")
        }
        let joined = try await repository.readAll(Name.self, sql: "SELECT p.name FROM people p JOIN pg_namespace n ON n.nspname = 'public' ORDER BY p.name")
        try await database.query("INSERT INTO people (name) VALUES ('Joined')")
        #expect(try await eventually { joined.value == [Name(name: "Ada"), Name(name: "Joined")] })
        #expect(try await !database.query("SELECT is_called FROM tally")[0].decode(Bool.self, at: 0))  // never drawn
    }

    @Test("a run that fails is reported naming each table the query reads, as messages name tables; the next change runs it again")
    func failedRunNamesItsTables() async throws {
        let errors = ErrorLog(repository)
        try await database.query(#"CREATE TABLE "Odd Tallies" (id bigint PRIMARY KEY, divisor int NOT NULL)"#)
        try await database.query(#"SELECT live.enable_change_notifications('"Odd Tallies"')"#)
        try await database.query("INSERT INTO people (id, name) VALUES (1, 'Ada')")
        try await database.query(#"INSERT INTO "Odd Tallies" VALUES (1, 1)"#)
        struct Quotient: Decodable, Equatable, Sendable { var name: String; var quotient: Int }
        let sql = #"SELECT p.name, (10 / t.divisor)::int AS quotient FROM people p JOIN "Odd Tallies" t ON t.id = p.id"#
        let quotients = try await repository.readAll(Quotient.self, sql: sql)
        #expect(quotients.value == [Quotient(name: "Ada", quotient: 10)])
        try await database.query(#"UPDATE "Odd Tallies" SET divisor = 0 WHERE id = 1"#)  // the next run divides by zero
        let expected = #"re-reading changed rows of public."Odd Tallies", public.people failed: "#
        #expect(try await eventually { errors.errors.all.contains { $0.hasPrefix(expected) } }, "\(errors.errors.all)")
        try await database.query(#"UPDATE "Odd Tallies" SET divisor = 2 WHERE id = 1"#)
        #expect(try await eventually { quotients.value == [Quotient(name: "Ada", quotient: 5)] }, "\(quotients.value)")
    }

    @Test("changes made while the listening connection was cut arrive after it reconnects")
    func outage() async throws {
        let tallies = try await repository.readAll(Tally.self, sql: Self.tallySQL, parameters: ["%"])
        _ = try await TestServer.admin.value.query(
            "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE '% (change feed)'",
            [try await database.name()])
        try await database.query("INSERT INTO people (id, name) VALUES (5, 'Alan')")
        let expected = try await rerun()
        #expect(try await eventually(timeout: .seconds(30)) { tallies.value.elements == expected })
    }
}

/// ``RerunSchedule`` over every sequence of up to ten events, without a database.
@Suite("Rerun schedule")
struct RerunScheduleTests {
    @Test("one run at a time; every request is followed by a run that starts after it; at most one extra run")
    func exhaustive() {
        func check(_ events: [Bool]) {  // true: a request; false: the running run ends (if one runs)
            var schedule = RerunSchedule()
            var running = false, unserved = false, pendingRuns = 0
            for isRequest in events {
                if isRequest {
                    if schedule.request() {
                        #expect(!running, "\(events)")
                        running = true
                        unserved = false                       // the run starts after the request
                    } else {
                        #expect(running, "\(events)")
                        unserved = true
                    }
                } else if running {
                    if schedule.finished() {
                        #expect(unserved, "\(events)")         // an extra run only when asked for
                        unserved = false
                        pendingRuns += 1
                    } else {
                        #expect(!unserved, "\(events)")        // a request is never dropped
                        running = false
                    }
                }
            }
            #expect(running == schedule.isRunning, "\(events)")
        }
        var count = 0
        for length in 0...10 {
            for bits in 0..<(1 << length) {
                check((0..<length).map { bits & (1 << $0) != 0 })
                count += 1
            }
        }
        #expect(count == 2047)
    }
}
