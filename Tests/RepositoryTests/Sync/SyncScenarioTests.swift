import Foundation
import IdentifiedCollections
@testable import Repository
import Testing

/// The ways the promise broke before the sync state machine, each as a scenario against a
/// real server, with other writers in psql and in other repositories (own pools and feeds).
@Suite("Sync scenarios")
struct SyncScenarioTests {
    let database: Database
    let repository: LiveRepository

    init() async throws {
        database = try await makeContactsDatabase()
        repository = LiveRepository(database)
    }

    func stored(_ id: Int) async throws -> Contact? {
        try await database.query("SELECT id, name, email FROM contacts WHERE id = $1", [id]).first?.decode(Contact.self)
    }

    @Test("a row deleted and inserted again in one transaction: every handle takes the new row")
    func reinsertInOneTransaction() async throws {
        for suffix in 1...4 { try await database.query("UPDATE contacts SET name = $1 WHERE id = 1", ["Ada \(suffix)"]) }
        let ada = try await repository.read(Contact.self, id: 1)
        let list = try await repository.readAll(Contact.self, orderBy: [.ascending(\.name)])
        #expect(ada.value.name == "Ada 4")
        try await psql("BEGIN; DELETE FROM contacts WHERE id = 1; INSERT INTO contacts (id, name) VALUES (1, 'Ada reborn'); COMMIT;",
                       database: database)
        #expect(try await eventually { ada.value == Contact(id: 1, name: "Ada reborn", email: nil) })
        #expect(ada.liveState == .live)
        #expect(try await eventually { list.value[id: 1]?.name == "Ada reborn" })
    }

    @Test("deleted, then inserted again in another transaction: the handle says deleted, then follows the new row")
    func reinsertInTwoTransactions() async throws {
        try await database.query("UPDATE contacts SET name = 'Grace 2' WHERE id = 2")
        let grace = try await repository.read(Contact.self, id: 2)
        let states = Recorder<LiveState?>()
        let subscription = grace.observe { _ in states.append(grace.liveState) }
        try await psql("DELETE FROM contacts WHERE id = 2", database: database)
        #expect(try await eventually { grace.liveState == .deleted })
        grace[\.name].value = "too late"  // refused: the row is gone
        await #expect(throws: LiveRecordError.self) { try await grace.save() }
        try await psql("INSERT INTO contacts (id, name) VALUES (2, 'Grace again')", database: database)
        #expect(try await eventually { grace.value.name == "Grace again" && grace.liveState == .live })
        #expect(try await repository.read(Contact.self, id: 2).value.name == "Grace again")
        grace[\.email].value = "hopper@example.com"
        try await grace.save()
        #expect(try await stored(2)?.email == "hopper@example.com")
        subscription.cancel()
    }

    @Test("databaseWins and localWins writers of one column, both waiting on a third session's row lock, converge")
    func mixedPoliciesUnderRowLock() async throws {
        let insistent = LiveRepository(database, conflictPolicy: .localWins)
        let polite = try await repository.read(Contact.self, id: 3)
        let pushy = try await insistent.read(Contact.self, id: 3)
        let locker = Database(database.configuration, maximumConnections: 1)
        try await locker.transaction { connection in
            try await connection.query("SELECT * FROM contacts WHERE id = 3 FOR UPDATE")
            polite[\.name].value = "polite"
            pushy[\.name].value = "pushy"
            let name = try await database.name()
            #expect(try await eventually {
                try await TestServer.admin.value.query(
                    "SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' AND query LIKE 'UPDATE%'", [name]).count == 2
            })
            try await connection.query("UPDATE contacts SET name = 'third' WHERE id = 3")
        }
        _ = try? await polite.save()   // databaseWins: may lose, and say so
        try await pushy.save()          // localWins: always ends written
        #expect(try await stored(3)?.name == "pushy")
        #expect(try await eventually { polite.value.name == "pushy" && pushy.value.name == "pushy" })
        locker.close()
        insistent.close()
    }

    @Test("a live query never shows a row that does not match, and says exactly what changed")
    func queryShowsOnlyMatchingRows() async throws {
        let withEmail = try await repository.readAll(Contact.self, where: "email IS NOT NULL", orderBy: [.ascending(\.name)])
        let seen = Recorder<(list: [Contact], changes: CollectionChanges<Int64>)>()
        let subscription = withEmail.observe { seen.append(($0.new.elements, $0.changes())) }
        try await psql("UPDATE contacts SET email = NULL, name = 'Edsger W. Dijkstra' WHERE id = 3", database: database)
        #expect(try await eventually { withEmail.value.ids.elements == [1, 2] })
        try await psql("UPDATE contacts SET email = 'ewd@example.com' WHERE id = 3", database: database)
        #expect(try await eventually { withEmail.value.ids.elements == [1, 3, 2] })
        try await psql("UPDATE contacts SET email = NULL WHERE id IN (1, 2)", database: database)
        #expect(try await eventually { withEmail.value.ids.elements == [3] })
        // The observer runs just after the list is visible (outside the lock): wait for it
        // before cancelling the subscription.
        #expect(try await eventually { seen.all.last?.changes == CollectionChanges(removed: [1, 2]) })
        subscription.cancel()
        for (list, _) in seen.all {
            #expect(list.allSatisfy { $0.email != nil }, "published a list with a row that does not match: \(list)")
        }
        #expect(seen.all.map(\.changes) == [
            CollectionChanges(removed: [3]),
            CollectionChanges(inserted: [3]),
            CollectionChanges(removed: [1, 2]),
        ])
    }

    @Test("a 5,000-row UPDATE under a 10,003-row live query arrives as one list update")
    func bulkUpdateIsOneListUpdate() async throws {
        try await database.query("INSERT INTO contacts (id, name, email) SELECT n, 'person ' || n, 'p' || n || '@example.com' FROM generate_series(100, 10099) n")
        let repository = LiveRepository(database)  // listening after the bulk insert
        let everyone = try await repository.readAll(Contact.self, where: "email IS NOT NULL", orderBy: [.ascending(\.id)])
        #expect(everyone.value.count == 10_003)
        let updates = Recorder<CollectionChanges<Int64>>()
        let subscription = everyone.observe { updates.append($0.changes()) }
        try await psql("UPDATE contacts SET name = name || '!' WHERE id BETWEEN 100 AND 5099", database: database)
        #expect(try await eventually(timeout: .seconds(30)) { everyone.value[id: 5099]?.name == "person 5099!" && updates.count >= 1 })
        #expect(updates.all.count == 1)
        #expect(updates.all.first?.updated.count == 5_000)
        try await psql("UPDATE contacts SET email = NULL WHERE id BETWEEN 5100 AND 7599", database: database)
        #expect(try await eventually(timeout: .seconds(30)) { everyone.value.count == 7_503 && updates.count >= 2 })
        #expect(updates.all.count == 2)  // one more would be a part of the first statement arriving late
        #expect(updates.all.last?.removed.count == 2_500)
        subscription.cancel()
        print("a 5,000-row UPDATE, then 2,500 rows leaving, under a 10,003-row live query: \(updates.all.count) list updates, \(repository.rowsRead) rows read")
    }
}
