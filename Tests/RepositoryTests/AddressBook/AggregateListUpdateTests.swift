import AddressBookKit
import Foundation
import IdentifiedCollections
import Repository
import Testing

/// A live query of aggregates changes in one update per statement, as one of records does:
/// a 300-row UPDATE of the roots, or of their children, is one list update, not 300.
@Suite("Aggregate list updates")
struct AggregateListUpdateTests {
    @Test("a 300-row UPDATE of people, then of their addresses, each reaches a live list of people as one update",
          arguments: [ChangeSource.notifications, .logicalReplication])
    func oneUpdatePerStatement(through source: ChangeSource) async throws {
        let database = try await TestServer.makeDatabase(replication: source != .notifications)
        try await AddressBook.migrate(database)
        if source != .notifications { for table in ["people", "addresses"] { try await LiveSchema.publish(table, on: database) } }
        try await database.query("""
            WITH p AS (INSERT INTO people (id, name) SELECT i, 'p' || i FROM generate_series(1, 300) AS i RETURNING id)
            INSERT INTO addresses (person_id, position, street) SELECT id, 0, 's' || id FROM p
            """)
        let repository = LiveRepository(database, changes: source)
        defer { repository.close() }
        let everyone = try await repository.readAll(AddressBookKit.Person.self, orderBy: [.ascending(\.id)])
        #expect(everyone.value.count == 300)
        // What each list update changed, and whether it shows the end of each statement.
        let updates = Recorder<(changed: Int, renamed: Bool, moved: Bool)>()
        let subscription = everyone.observe { update in
            updates.append((CollectionChanges(from: update.old, to: update.new).updated.count,
                            update.new.allSatisfy { $0.name.hasSuffix("x") },
                            update.new.allSatisfy { $0.addresses.first?.street.hasSuffix("!") == true }))
        }
        defer { subscription.cancel() }

        try await psql("UPDATE people SET name = name || 'x'", database: database)
        #expect(try await eventually { updates.all.contains { $0.renamed } })
        try await psql("UPDATE addresses SET street = street || '!'", database: database)
        #expect(try await eventually { updates.all.contains { $0.moved } })
        #expect(updates.all.map(\.changed) == [300, 300], "one list update per statement")
    }
}
