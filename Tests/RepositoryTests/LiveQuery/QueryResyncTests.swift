import Foundation
import IdentifiedCollections
@testable import Repository
import Testing

/// A live query across an outage of the change feed: what changed meanwhile comes back as the
/// query's next run, in one update of its list.
@Suite("Live queries after an outage")
struct QueryResyncTests {
    struct Item: Record, Equatable {
        static let tableName = "items"
        var id: Int64
        var generation: Int
    }

    @Test("every row changed while the feed was away comes back in one update of each list, two overlapping queries alike; a row that left a query, held by a handle, is read too (a stranger saw a list half old, half new)")
    func oneUpdateAfterAnOutage() async throws {
        let database = try await TestServer.makeDatabase()
        try await database.query("CREATE TABLE items (id bigint PRIMARY KEY, generation int NOT NULL)")
        try await LiveSchema.enable("items", on: database)
        // More rows than one batch of a re-read (1,000), so that row by row they would come in parts.
        try await database.query("INSERT INTO items SELECT g, 0 FROM generate_series(1, 3000) g")
        let repository = LiveRepository(database)
        defer { repository.close() }
        let others = try await repository.readAll(Item.self, where: "id > $1", parameters: [1], orderBy: [.ascending(\.id)])
        // Row 1 is a member of this query only, which it leaves: nothing reads it but itself.
        let firstGeneration = try await repository.readAll(Item.self, where: "generation = $1", parameters: [0], orderBy: [.ascending(\.id)])
        let one = try await repository.read(Item.self, id: 1)
        let lists = Recorder<Set<Int>>()  // the generations each list published holds
        let sizes = Recorder<Int>()       // the rows each list of the first generation published holds
        let subscriptions = [others.observe { lists.append(Set($0.new.map(\.generation))) },
                             firstGeneration.observe { sizes.append($0.new.count) }]
        defer { subscriptions.forEach { $0.cancel() } }
        try await Self.cutTheFeed(on: database, while: "UPDATE items SET generation = 1")
        #expect(try await eventually { others.value.count == 2999 && others.value.allSatisfy { $0.generation == 1 } })
        #expect(try await eventually { firstGeneration.value.isEmpty && one.value.generation == 1 })
        #expect(lists.all.allSatisfy { $0.count == 1 }, "lists published with rows of both generations: \(lists.all.filter { $0.count > 1 }.count) of \(lists.count)")
        #expect(lists.count == 1)
        #expect(sizes.all == [0], "the rows leave the other query in one update: \(sizes.all.prefix(5))")
    }

    /// Cuts the change feed's connection and keeps it out (no new connection to the database)
    /// while `sql` runs through a connection open already; then lets it back in.
    static func cutTheFeed(on database: Database, while sql: String) async throws {
        let name = try await database.query("SELECT current_database()")[0].decode(String.self, at: 0)
        func feedListens() async throws -> Bool {
            try await database.query("SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE '% (change feed)'", [name])[0]
                .decode(Int.self, at: 0) == 1
        }
        #expect(try await eventually { try await feedListens() })
        let admin = try await TestServer.admin.value
        try await database.withConnection { connection in
            try await admin.query("ALTER DATABASE \(SQLIdentifier.quoted(name)) ALLOW_CONNECTIONS false")
            try await admin.query("SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE '% (change feed)'", [name])
            try await connection.execute(script: sql)
            try await admin.query("ALTER DATABASE \(SQLIdentifier.quoted(name)) ALLOW_CONNECTIONS true")
        }
    }

    struct Ticket: Record, Equatable {
        enum State: String, Codable { case open, closed }
        static let tableName = "tickets"
        var id: Int64
        var generation: Int
        var state: State
    }

    @Test("a row that no longer decodes after an outage leaves only its own store as it was: the other rows of its type, in a live query or not, are read (a review found them all left stale)")
    func undecodableRowAfterAnOutage() async throws {
        let database = try await TestServer.makeDatabase()
        try await database.query("CREATE TABLE tickets (id bigint PRIMARY KEY, generation int NOT NULL, state text NOT NULL)")
        try await LiveSchema.enable("tickets", on: database)
        try await database.query("INSERT INTO tickets SELECT g, 0, 'open' FROM generate_series(1, 300) g")
        let repository = LiveRepository(database)
        defer { repository.close() }
        let errors = ErrorLog(repository)
        let listed = try await repository.readAll(Ticket.self, where: "id > $1", parameters: [1], orderBy: [.ascending(\.id)])
        let alone = try await repository.read(Ticket.self, id: 1)   // in no query
        try await Self.cutTheFeed(on: database, while: "UPDATE tickets SET generation = 1; UPDATE tickets SET state = 'archived' WHERE id = 2")
        #expect(try await eventually { alone.value.generation == 1 })
        #expect(try await eventually { listed.value.filter { $0.id != 2 }.allSatisfy { $0.generation == 1 } && listed.value.count == 299 })
        #expect(listed.value[id: 2]?.generation == 0)             // kept as it was, and reported
        #expect(try await eventually { errors.errors.all.contains { $0.contains("archived") } }, "\(errors.errors.all)")
    }
}
