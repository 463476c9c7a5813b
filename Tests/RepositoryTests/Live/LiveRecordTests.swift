import Foundation
@testable import Repository
import Testing

@Suite("Live records")
struct LiveRecordTests {
    let database: Database
    let repository: LiveRepository

    init() async throws {
        database = try await makeContactsDatabase()
        repository = LiveRepository(database)
    }

    /// The row's columns, and its version (`xmin`).
    func row(_ id: Int) async throws -> (name: String, email: String?, version: Int64) {
        let row = try await database.query("SELECT name, email, xmin::text::bigint AS version FROM contacts WHERE id = $1", [id])[0]
        return (try row.decode(String.self, column: "name"), try row.decode(String?.self, column: "email"), try row.decode(Int64.self, column: "version"))
    }

    @Test("text with a NUL character is refused when it is set: the value stays, the edits made with it are written, save() throws the refusal")
    func nulRefusedWhenSet() async throws {
        let here = try await repository.read(Contact.self, id: 1)
        let name = here.value.name
        here[\.email].value = "ada@example.com"
        here[\.name].value = "Ada\u{0}Lovelace"
        #expect(here.value.name == name)
        let error = await #expect(throws: LiveRecordError.self) { try await here.save() }
        #expect("\(error.map { "\($0)" } ?? "")".contains("the text holds a NUL character"), "\(error.map { "\($0)" } ?? "")")
        let stored = try await row(1)
        #expect(stored.email == "ada@example.com" && stored.name == name)
        #expect(here.value.email == "ada@example.com")
    }

    @Test("read returns the row; a missing row is an error")
    func read() async throws {
        let ada = try await repository.read(Contact.self, id: 1)
        #expect(ada.value == Contact(id: 1, name: "Ada", email: "ada@example.com"))
        #expect(ada.liveState == .live)
        await #expect(throws: LiveRecordError.self) { try await repository.read(Contact.self, id: 99) }
    }

    @Test("two reads of one row share state")
    func identity() async throws {
        let first = try await repository.read(Contact.self, id: 1)
        let second = try await repository.read(Contact.self, id: 1)
        first[\.name].value = "Augusta"
        #expect(second.value.name == "Augusta")
        try await second.save()
        #expect(try await row(1).name == "Augusta")
    }

    @Test("setting a property updates observers at once and persists it, bumping the version")
    func writeThrough() async throws {
        let ada = try await repository.read(Contact.self, id: 1)
        let before = try await row(1).version
        let seen = Recorder<Update<String>>()
        let subscription = ada[\.name].observe { seen.append($0) }
        let me = Author("form")
        ada[\.name].set("Ada Lovelace", as: me)
        #expect(seen.all == [Update(old: "Ada", new: "Ada Lovelace", author: me)])
        for suffix in 1...20 { ada[\.email].value = "ada\(suffix)@example.com" }  // coalesced
        try await ada.save()
        let stored = try await row(1)
        #expect(stored.name == "Ada Lovelace")
        #expect(stored.email == "ada20@example.com")
        #expect(stored.version != before)
        // The echo of our own writes does not call observers again: once a later change by
        // someone else has arrived (announcements come in commit order), there was none.
        try await psql("UPDATE contacts SET email = 'marker@example.com' WHERE id = 1", database: database)
        #expect(try await eventually { ada.value.email == "marker@example.com" })
        #expect(try await eventually { seen.count == 1 })  // its observer runs just after the value is visible
        subscription.cancel()
    }

    @Test("a change committed by psql reaches observers, authored by the database")
    func remoteChange() async throws {
        let grace = try await repository.read(Contact.self, id: 2)
        let seen = Recorder<Update<String>>()
        let subscription = grace[\.name].observe { seen.append($0) }
        try await psql("UPDATE contacts SET name = 'Grace Hopper' WHERE id = 2", database: database)
        // Observers run just after the value is visible (outside the lock): wait for them.
        #expect(try await eventually { seen.all == [Update(old: "Grace", new: "Grace Hopper", author: .database)] })
        #expect(grace.value.name == "Grace Hopper")
        subscription.cancel()
    }

    @Test("an observation keeps the row live after the handle itself is dropped")
    func observationKeepsRowLive() async throws {
        let seen = Recorder<String>()
        let subscription = try await repository.read(Contact.self, id: 2)[\.name].observe { seen.append($0.new) }
        try await psql("UPDATE contacts SET name = 'Grace Hopper' WHERE id = 2", database: database)
        #expect(try await eventually { seen.all == ["Grace Hopper"] })
        subscription.cancel()
    }

    @Test("a change made while the listener was terminated converges after it reconnects")
    func outage() async throws {
        let edsger = try await repository.read(Contact.self, id: 3)
        let terminated = try await TestServer.admin.value.query(
            "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE '% (change feed)'",
            [try await database.name()])
        #expect(terminated.count == 1)
        try await database.query("UPDATE contacts SET name = 'Dijkstra' WHERE id = 3")
        #expect(try await eventually { edsger.value.name == "Dijkstra" })
    }

    @Test("two repositories editing different fields of one row both survive")
    func disjointEdits() async throws {
        let other = LiveRepository(database)
        let here = try await repository.read(Contact.self, id: 1)
        let there = try await other.read(Contact.self, id: 1)
        here[\.name].value = "Countess"
        there[\.email].value = "countess@example.com"
        try await here.save()
        try await there.save()
        let stored = try await row(1)
        #expect(stored.name == "Countess")
        #expect(stored.email == "countess@example.com")
        #expect(try await eventually { here.value == there.value && here.value.email == "countess@example.com" && there.value.name == "Countess" })
        other.close()
    }

    @Test("a constraint violation reverts the handle and surfaces the SQLSTATE")
    func constraintViolation() async throws {
        let ada = try await repository.read(Contact.self, id: 1)
        let errors = ErrorLog(repository)
        let seen = Recorder<Update<String?>>()
        let subscription = ada[\.email].observe { seen.append($0) }
        ada[\.email].value = "grace@example.com"  // taken by Grace
        let error = await #expect(throws: LiveRecordError.self) { try await ada.save() }
        guard case .writeFailed(_, _, let underlying) = error else {
            Issue.record("expected writeFailed, got \(String(describing: error))")
            return
        }
        #expect(underlying.sqlState == PostgresError.Code.uniqueViolation)
        #expect(ada.value.email == "ada@example.com")
        #expect(seen.all.map(\.author) == [nil, .revert])
        #expect(try await eventually { errors.errors.count == 1 })
        subscription.cancel()
    }

    @Test("a forged NOTIFY changes nothing")
    func forgedNotification() async throws {
        let ada = try await repository.read(Contact.self, id: 1)
        let seen = Recorder<Update<Contact>>()
        let subscription = ada.observe { seen.append($0) }
        try await database.query("SELECT pg_notify('live_changes', $1)", [#"{"table":"public.contacts","op":"update","key":1,"version":99,"name":"Mallory"}"#])
        try await database.query("SELECT pg_notify('live_changes', $1)", [#"{"table":"public.contacts","op":"delete","key":1,"version":99}"#])
        // A real change afterwards proves the forged ones were processed first.
        try await psql("UPDATE contacts SET email = 'real@example.com' WHERE id = 1", database: database)
        // The value is visible before its observers have run (they run outside the lock): wait
        // for the observer, which also proves no forged update reached it before.
        #expect(try await eventually { seen.all.map(\.new.email) == ["real@example.com"] })
        #expect(ada.value.name == "Ada")
        #expect(ada.liveState == .live)
        subscription.cancel()
    }

    @Test("a deleted row: the handle says so, and writing to it is reverted and reported")
    func deletion() async throws {
        let edsger = try await repository.read(Contact.self, id: 3)
        let authors = Recorder<Author?>(), unchanged = Recorder<Bool>()
        let subscription = edsger.observe { authors.append($0.author); unchanged.append($0.old == $0.new) }
        try await psql("DELETE FROM contacts WHERE id = 3", database: database)
        #expect(try await eventually { edsger.liveState == .deleted })
        // The state is visible before its observers have run (they run outside the lock).
        #expect(try await eventually { !authors.all.isEmpty })
        #expect(authors.all == [.deletion])
        #expect(unchanged.all == [true], "the handle keeps the row's last value, as README says")
        edsger[\.name].value = "ghost"
        #expect(edsger.value.name == "Edsger")
        await #expect(throws: LiveRecordError.self) { try await edsger.save() }
        subscription.cancel()
    }

    @Test("1,000 live handles and one row changes: only that handle's observers run")
    func fanOut() async throws {
        try await database.query("INSERT INTO contacts (id, name) SELECT n, 'c' || n FROM generate_series(10, 1009) AS n")
        let calls = Recorder<Int64>()
        var handles: [Var<Contact>] = []
        var subscriptions: [Subscription] = []
        for id in Int64(10)...1009 {
            let handle = try await repository.read(Contact.self, id: id)
            subscriptions.append(handle.observe { calls.append($0.new.id) })
            handles.append(handle)
        }
        try await psql("UPDATE contacts SET name = 'changed' WHERE id = 500", database: database)
        #expect(try await eventually { handles[490].value.name == "changed" })
        try await database.query("UPDATE contacts SET name = 'marker' WHERE id = 1")  // an unrelated, later change
        let marker = try await repository.read(Contact.self, id: 1)
        #expect(try await eventually { marker.value.name == "marker" })
        #expect(calls.all == [500])
        _ = subscriptions
    }

    @Test("10,000 rows changed in one transaction: every handle converges with few refetch queries")
    func burst() async throws {
        try await database.query("INSERT INTO contacts (id, name) SELECT n, 'c' || n FROM generate_series(100000, 109999) AS n")
        var handles: [Var<Contact>] = []
        for id in Int64(100_000)...109_999 { handles.append(try await repository.read(Contact.self, id: id)) }
        let before = repository.rowQueries
        try await database.query("UPDATE contacts SET name = name || '!' WHERE id >= 100000")
        #expect(try await eventually(timeout: .seconds(60)) { handles.allSatisfy { $0.value.name.hasSuffix("!") } })
        let queries = repository.rowQueries - before
        print("burst: 10000 live handles converged after \(queries) refetch queries")
        #expect(queries <= 200)
    }

    @Test("a failure of a write nobody awaited is thrown by the next save()")
    func failureKeptForLaterSave() async throws {
        let ada = try await repository.read(Contact.self, id: 1)
        ada[\.email].value = "grace@example.com"  // taken by Grace: fails in the background
        #expect(try await eventually { ada.value.email == "ada@example.com" })  // reverted, nobody waiting
        await #expect(throws: LiveRecordError.self) { try await ada.save() }
        try await ada.save()  // reported once
    }

    @Test("the identity map forgets rows nobody holds any more")
    func identityMapPrunes() async throws {
        try await database.query("INSERT INTO contacts (id, name) SELECT n, 'c' || n FROM generate_series(20000, 23999) AS n")
        for id in Int64(20_000)...23_999 { _ = try await repository.read(Contact.self, id: id) }
        #expect(repository.identityMapCount <= 2048)
        let kept = try await repository.read(Contact.self, id: 20_000)
        #expect(kept.value.name == "c20000")
    }

    @Test("a table's own version column is the user's, like any column: read, written when edited, and bumped by nothing")
    func declaredVersion() async throws {
        try await database.query("ALTER TABLE contacts ADD COLUMN version bigint NOT NULL DEFAULT 7")
        let contact = try await repository.read(VersionedContact.self, id: 1)
        #expect(contact.value.version == 7)
        contact[\.name].value = "Ada, versioned"
        try await contact.save()
        #expect(try await row(1).name == "Ada, versioned")
        #expect(try await database.query("SELECT version FROM contacts WHERE id = 1")[0].decode(Int64.self, at: 0) == 7)
        contact[\.version].value = 42  // written like any other column (it was dropped while save() returned)
        try await contact.save()
        #expect(try await database.query("SELECT version FROM contacts WHERE id = 1")[0].decode(Int64.self, at: 0) == 42)
        #expect(contact.value.version == 42)
    }

    @Test("a column added by another process: the next change still reaches the handle, with no failed re-read reported (the feed prepares its statement again)")
    func columnAdded() async throws {
        let errors = ErrorLog(repository)
        let contact = try await repository.read(Contact.self, id: 1)
        try await psql("UPDATE contacts SET name = 'before' WHERE id = 1", database: database)
        #expect(try await eventually { contact.value.name == "before" })  // the feed's re-read is prepared now
        try await psql("ALTER TABLE contacts ADD COLUMN extra text NOT NULL DEFAULT 'x'", database: database)
        for name in ["after", "and after"] {
            try await psql("UPDATE contacts SET name = '\(name)' WHERE id = 1", database: database)
            #expect(try await eventually { contact.value.name == name })
        }
        #expect(errors.errors.all.isEmpty, "\(errors.errors.all)")
    }

    @Test("a server restart: the handle converges to a change committed after it")
    func serverRestart() async throws {
        let directory = FileManager.default.temporaryDirectory.path + "/live-restart-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await LocalServer.start(.persistent(directory: directory))
        let local = Database(server.configuration)
        try await migrateProject(local)
        let id = try await local.query("INSERT INTO people (name) VALUES ('before') RETURNING id")[0].decode(Int64.self, at: 0)
        let repository = LiveRepository(local)
        let errors = ErrorLog(repository)
        let person = try await repository.read(LivePerson.self, id: id)

        try await server.stop()
        let restarted = try await LocalServer.start(.persistent(directory: directory))
        try await local.query("UPDATE people SET name = 'after restart' WHERE id = $1", [id])
        #expect(try await eventually(timeout: .seconds(30)) { person.value.name == "after restart" })
        #expect(try await eventually { errors.errors.all.contains { $0.contains("listening again") } })
        repository.close()
        local.close()
        try await restarted.stop()
    }
}
