import Foundation
import IdentifiedCollections
@testable import Repository
import Testing

@Suite("Live queries")
struct LiveQueryTests {
    let database: Database
    let repository: LiveRepository

    init() async throws {
        database = try await makeContactsDatabase()
        repository = LiveRepository(database)
    }

    func byName(_ condition: String? = nil, _ parameters: [any SQLValueConvertible] = []) async throws -> Var<IdentifiedArrayOf<Contact>> {
        try await repository.readAll(Contact.self, where: condition, parameters: parameters, orderBy: [.ascending(\.name)])
    }

    /// The query's answer as the server gives it now.
    func rerun(_ condition: String = "true") async throws -> [Int64] {
        try await database.query("SELECT id FROM contacts WHERE \(condition) ORDER BY name COLLATE \"C\", id").map { try $0.decode(Int64.self, at: 0) }
    }

    @Test("update from many tasks at once through a live query's elements loses nothing: the stores take the query's edits in the order the list made them")
    func concurrentQueryUpdates() async throws {
        let people = try await byName()
        for round in 0..<3 {
            let before = people.value[id: 1]?.email?.count ?? 0
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        for _ in 0..<25 {
                            switch round {
                            case 0: people[id: 1].update { contact in contact?.email?.append("x") }
                            case 1: people[id: 1].update { contact in
                                if var copy = contact {
                                    copy.email = (copy.email ?? "") + "x"
                                    contact = copy
                                }
                            }
                            default: people.update { list in list[id: 1]?.email?.append("x") }
                            }
                            await Task.yield()
                        }
                    }
                }
            }
            try await people.save()
            #expect(people.value[id: 1]?.email?.count == before + 500, "round \(round): \((people.value[id: 1]?.email?.count ?? 0) - before) of 500")
            let stored = try await database.query("SELECT length(email) FROM contacts WHERE id = 1")[0].decode(Int.self, at: 0)
            #expect(stored == before + 500, "round \(round): \(stored - before) of 500 stored")
        }
    }

    @Test("the result follows psql inserts, updates, order changes and deletes, and says which ids changed")
    func followsOtherProcesses() async throws {
        let people = try await byName("email IS NOT NULL")
        #expect(people.value.map(\.name) == ["Ada", "Edsger", "Grace"])
        let changes = Recorder<CollectionChanges<Int64>>()
        let subscription = people.observe { changes.append($0.changes()) }

        try await psql("INSERT INTO contacts (id, name, email) VALUES (4, 'Barbara', 'b@example.com')", database: database)
        #expect(try await eventually { people.value.map(\.name) == ["Ada", "Barbara", "Edsger", "Grace"] })
        // Observers run just after the value is visible (outside the lock): wait for them.
        #expect(try await eventually { changes.all.last == CollectionChanges(inserted: [4]) })

        try await psql("UPDATE contacts SET name = 'Zuse' WHERE id = 1", database: database)  // moves to the end
        #expect(try await eventually { people.value.ids.elements == [4, 3, 2, 1] })
        #expect(try await eventually { changes.all.last == CollectionChanges(updated: [1]) })

        try await psql("UPDATE contacts SET email = NULL WHERE id = 3", database: database)  // stops matching
        #expect(try await eventually { people.value.ids.elements == [4, 2, 1] })
        try await psql("DELETE FROM contacts WHERE id = 4", database: database)
        #expect(try await eventually { people.value.ids.elements == [2, 1] })
        #expect(try await eventually { changes.all.contains(CollectionChanges(removed: [4])) })
        try await psql("UPDATE contacts SET email = 'e@example.com' WHERE id = 3", database: database)  // matches again
        #expect(try await eventually { people.value.ids.elements == [3, 2, 1] })
        #expect(try await people.value.ids.elements == rerun("email IS NOT NULL"))
        subscription.cancel()
    }

    @Test("a live query's load cancelled while its statement waits for a lock throws CancellationError at once, also when the table has a live query already")
    func cancelledLoad() async throws {
        let first = try await byName()  // the table's router exists from now on
        let locker = Database(database.configuration, maximumConnections: 1)
        defer { locker.close() }
        try await locker.withConnection { connection in
            try await connection.execute(script: "BEGIN; LOCK TABLE contacts IN ACCESS EXCLUSIVE MODE")
            let outcome = Recorder<String>()
            let load = Task {
                do {
                    _ = try await byName("email IS NOT NULL")
                    outcome.append("loaded")
                } catch is CancellationError {
                    outcome.append("cancelled")
                } catch {
                    outcome.append("\(error)")
                }
            }
            let waiting = try await eventually {
                try await database.query("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")[0].decode(Int64.self, at: 0) > 0
            }
            load.cancel()
            let settled = try await eventually(timeout: .seconds(10)) { !outcome.all.isEmpty }
            try await connection.execute(script: "ROLLBACK")  // also when the test fails: nothing is left waiting
            #expect(waiting && settled && outcome.all == ["cancelled"], "\(outcome.all)")
        }
        #expect(first.value.count == 3)
    }

    @Test("a condition ending in a line comment reads as written; an empty one is refused in one line")
    func conditionComments() async throws {
        let commented = try await byName("email IS NOT NULL -- the ones we can write to")
        #expect(try await commented.value.map(\.id) == rerun("email IS NOT NULL"))
        let people = try await byName("name = $1 -- ) ;", ["Ada"])
        #expect(people.value.map(\.name) == ["Ada"])
        let empty = await Result { try await byName("  -- nothing") }
        #expect(empty.failure.map { "\($0)".contains("no expression at all") } == true, "\(empty)")
    }

    struct Reading: Record, Equatable {
        static let tableName = "readings"
        var id: Int64
        var d: Double
    }

    @Test("ordered by a double precision column holding NaN, ±Infinity and -0: the list keeps PostgreSQL's order (NaN above every number) as psql changes rows, ascending and descending")
    func nanSortKeys() async throws {
        try await database.query("CREATE TABLE readings (id bigint PRIMARY KEY, d float8 NOT NULL)")
        try await database.query("INSERT INTO readings SELECT n, (ARRAY['NaN', '-Infinity', 'Infinity', '-0', '0', '1e-320', '-1', '3', '2.5'])[1 + n % 9]::float8 FROM generate_series(1, 30) AS n")
        try await LiveSchema.enable("readings", on: database)
        let ascending = try await repository.readAll(Reading.self, orderBy: [.ascending(\.d)])
        let descending = try await repository.readAll(Reading.self, orderBy: [.descending(\.d)])
        func sql(_ direction: String) async throws -> [Int64] {
            // Ties (and -0 = 0) by id, as the live query breaks them.
            try await database.query("SELECT id FROM readings ORDER BY d \(direction), id").map { try $0.decode(Int64.self, at: 0) }
        }
        #expect(try await ascending.value.map(\.id) == sql("ASC"))
        #expect(try await descending.value.map(\.id) == sql("DESC"))
        var random = SystemRandomNumberGenerator()
        for step in 0..<12 {
            let value = ["'NaN'", "'-Infinity'", "'Infinity'", "'-0'", "0", "-2", "7", "1.5"].randomElement(using: &random)!
            try await psql("UPDATE readings SET d = \(value) WHERE id % 7 = \(step % 7)", database: database)
            let (up, down) = (try await sql("ASC"), try await sql("DESC"))
            #expect(try await eventually { ascending.value.map(\.id) == up && descending.value.map(\.id) == down }, "step \(step): \(value)")
        }
    }

    @Test("rows holding NaN are compared as the database holds them: a live query's changes() never lists them as updated for another row's change, and rewriting NaN tells nobody")
    func nanRowsAreNotUpdates() async throws {
        try await database.query("CREATE TABLE readings (id bigint PRIMARY KEY, d float8 NOT NULL)")
        try await database.query("INSERT INTO readings VALUES (1, 'NaN'), (2, 1), (3, 'NaN')")
        try await LiveSchema.enable("readings", on: database)
        let readings = try await repository.readAll(Reading.self, orderBy: [.ascending(\.id)])
        let changes = Recorder<CollectionChanges<Int64>>()
        let subscription = readings.observe { changes.append($0.changes()) }
        defer { subscription.cancel() }
        try await psql("INSERT INTO readings VALUES (4, 2)", database: database)
        #expect(try await eventually { changes.all.count == 1 })
        try await psql("UPDATE readings SET d = 'NaN' WHERE id = 1", database: database)  // a new row version, the same value
        try await psql("UPDATE readings SET d = 5 WHERE id = 2", database: database)
        #expect(try await eventually { readings.value[id: 2]?.d == 5 && changes.all.count >= 2 })
        #expect(changes.all == [CollectionChanges(inserted: [4]), CollectionChanges(updated: [2])])
    }

    struct Scored: Record, Equatable {
        static let tableName = "scored"
        var id: Int64
        var score: Double?
    }

    @Test("ordered by a nullable column: nil after every value ascending and before them descending, as ORDER BY puts NULL, as psql changes rows")
    func optionalSortKeys() async throws {
        try await database.query("CREATE TABLE scored (id bigint PRIMARY KEY, score float8)")
        try await database.query("INSERT INTO scored SELECT n, CASE WHEN n % 3 = 0 THEN NULL ELSE n % 5 END FROM generate_series(1, 20) AS n")
        try await LiveSchema.enable("scored", on: database)
        let ascending = try await repository.readAll(Scored.self, orderBy: [.ascending(\.score)])
        let descending = try await repository.readAll(Scored.self, orderBy: [.descending(\.score)])
        func sql(_ direction: String) async throws -> [Int64] {
            try await database.query("SELECT id FROM scored ORDER BY score \(direction), id").map { try $0.decode(Int64.self, at: 0) }
        }
        #expect(try await ascending.value.map(\.id) == sql("ASC"))
        #expect(try await descending.value.map(\.id) == sql("DESC"))
        for (step, value) in ["NULL", "-1", "NULL", "9", "2"].enumerated() {
            try await psql("UPDATE scored SET score = \(value) WHERE id % 4 = \(step % 4)", database: database)
            let (up, down) = (try await sql("ASC"), try await sql("DESC"))
            #expect(try await eventually { ascending.value.map(\.id) == up && descending.value.map(\.id) == down }, "step \(step): \(value)")
        }
    }

    @Test("a TRUNCATE by psql empties the query and marks every live handle of the table deleted: rows the query holds, and rows it does not")
    func truncate() async throws {
        try await database.query("INSERT INTO contacts (id, name, email) VALUES (5, 'Nobody', NULL)")
        let people = try await byName("email IS NOT NULL")
        let held = try await repository.read(Contact.self, id: 2)
        let outside = try await repository.read(Contact.self, id: 5)  // no match: the query does not hold it
        let element = people[id: 1]
        #expect(!people.value.isEmpty && held.liveState == .live && outside.liveState == .live)

        try await psql("TRUNCATE contacts", database: database)
        #expect(try await eventually { people.value.isEmpty })
        #expect(try await eventually { held.liveState == .deleted && outside.liveState == .deleted },
                "\(String(describing: held.liveState)) \(String(describing: outside.liveState))")
        #expect(element.value == nil)  // an element handle becomes nil when its row goes
    }

    @Test("an element handle writes through, follows its row when the order changes, and becomes nil when the row goes")
    func elementHandles() async throws {
        let people = try await byName()
        let grace = people[id: 2]
        grace[\.email].value = "grace@navy.mil"
        try await people.save()
        #expect(try await database.query("SELECT email FROM contacts WHERE id = 2")[0].decode(String.self, at: 0) == "grace@navy.mil")

        // The same row through read(id:) shares the value.
        let single = try await repository.read(Contact.self, id: 2)
        #expect(single.value.email == "grace@navy.mil")
        single[\.name].value = "Aaron"  // now first
        #expect(people.value.ids.elements == [2, 1, 3])
        try await single.save()
        #expect(grace.value?.name == "Aaron")

        try await psql("UPDATE contacts SET name = 'Zed' WHERE id = 2", database: database)
        #expect(try await eventually { people.value.ids.elements == [1, 3, 2] })
        #expect(grace.value?.name == "Zed")
        try await psql("DELETE FROM contacts WHERE id = 2", database: database)
        #expect(try await eventually { grace.value == nil })
        #expect(try await eventually { single.liveState == .deleted })  // the query may drop it first
    }

    @Test("editing a sort key through the result moves the element at once")
    func localReorder() async throws {
        let people = try await byName()
        people[id: 3][\.name].value = "Aaron"
        #expect(people.value.ids.elements == [3, 1, 2])
        try await people.save()
        #expect(try await rerun() == [3, 1, 2])
    }

    @Test("adding, removing or moving elements through the result is undone and reported; a renamed element moves unreported")
    func membershipIsReadOnly() async throws {
        let log = ErrorLog(repository)
        let people = try await byName()
        people.value.remove(id: 1)
        #expect(people.value.ids.elements == [1, 3, 2])
        people.value.append(Contact(id: 9, name: "Nobody", email: nil))
        #expect(people.value.ids.elements == [1, 3, 2])
        people.value.swapAt(0, 2)
        #expect(people.value.ids.elements == [1, 3, 2])
        people[id: 2].value = Contact(id: 8, name: "Other", email: nil)   // another id: neither a trap nor a member
        #expect(people.value.ids.elements == [1, 3, 2])
        people[0][\.id].value = 999                           // an id edited through a position: no trap either
        #expect(people.value.ids.elements == [1, 3, 2])
        #expect(try await eventually { log.errors.count == 5 })
        people[id: 1][\.name].value = "Zed"                   // moves by the order: not a move of ours
        #expect(people.value.ids.elements == [3, 2, 1])
        people.update { list in                               // moved where the order puts it anyway
            list[id: 3]!.name = "Zz"
            list.move(fromOffsets: [0], toOffset: 3)
        }
        #expect(people.value.ids.elements == [2, 1, 3])
        try await people.save()
        #expect(log.errors.count == 5)
        #expect(try await database.query("SELECT count(*) FROM contacts")[0].decode(Int.self, at: 0) == 3)
    }

    @Test("rows inserted while the listener was terminated appear after it reconnects")
    func outage() async throws {
        let people = try await byName()
        _ = try await TestServer.admin.value.query(
            "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE '% (change feed)'",
            [try await database.name()])
        try await database.query("INSERT INTO contacts (id, name) VALUES (5, 'Alan')")
        try await database.query("DELETE FROM contacts WHERE id = 2")
        #expect(try await eventually(timeout: .seconds(30)) { people.value.ids.elements == [1, 5, 3] })
    }

    @Test("10,000-row result, one row changes: a bounded number of rows is re-read")
    func costOfOneChange() async throws {
        try await database.query("INSERT INTO contacts (id, name) SELECT n, 'person ' || n FROM generate_series(100, 10099) n")
        // A repository that starts listening after the bulk insert, so its announcements do not count.
        let repository = LiveRepository(database)
        let people = try await repository.readAll(Contact.self, orderBy: [.ascending(\.name)])
        #expect(people.value.count == 10_003)
        let before = repository.rowsRead
        try await psql("UPDATE contacts SET name = 'Aardvark' WHERE id = 5000", database: database)
        #expect(try await eventually { people.value.first?.id == 5000 })
        try await psql("INSERT INTO contacts (id, name) VALUES (20000, 'Aaa')", database: database)
        #expect(try await eventually { people.value.first?.id == 20000 })
        let reread = repository.rowsRead - before
        print("10,003-row live query, one update and one insert by psql: \(reread) rows re-read")
        #expect(reread <= 4)
        #expect(people.value.ids.elements == (try await rerun()))
    }

    @Test("statements moving many rows at once leave the list as a re-run of the query orders it")
    func bulkReorders() async throws {
        try await database.query("INSERT INTO contacts (id, name) SELECT n, 'q' || lpad(n::text, 4, '0') FROM generate_series(100, 399) n")
        let people = try await byName()
        #expect(people.value.ids.elements == (try await rerun()))
        // A run of 51 neighbours moves to the end together, each still in order with the next.
        try await psql("UPDATE contacts SET name = 'r' || id WHERE id BETWEEN 100 AND 150", database: database)
        #expect(try await eventually { try await people.value.ids.elements == rerun() })
        // 300 rows reverse their order in one statement.
        try await psql("UPDATE contacts SET name = 's' || lpad((500 - id)::text, 4, '0') WHERE id BETWEEN 100 AND 399", database: database)
        #expect(try await eventually { try await people.value.ids.elements == rerun() })
    }
}
