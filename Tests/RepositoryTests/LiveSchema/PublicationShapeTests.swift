import Foundation
import Repository
import Testing

/// Publications made elsewhere (a migration's `CREATE PUBLICATION`), as users make them: a
/// partitioned table published as its partitions, a row filter, several processes publishing at
/// once. Each is followed, or refused in one line naming the remedy — never followed partly.
@Suite("Publications made elsewhere")
struct PublicationShapeTests {
    struct Item: Record, Equatable {
        static let tableName = "items"
        var id: Int64
        var name: String
    }

    @Test("a partitioned table added by ALTER PUBLICATION (published as its partitions) is refused, naming the fix; LiveSchema.publish makes the publication publish its root, and it is followed")
    func partitionedTableViaPartitions() async throws {
        let database = try await TestServer.makeDatabase(replication: true)
        try await database.withConnection { try await $0.execute(script: """
            CREATE TABLE items (id bigint PRIMARY KEY, name text NOT NULL) PARTITION BY RANGE (id);
            CREATE TABLE items_a PARTITION OF items FOR VALUES FROM (0) TO (100);
            INSERT INTO items VALUES (1, 'one');
            CREATE PUBLICATION live_changes; ALTER PUBLICATION live_changes ADD TABLE items;
            """) }
        let repository = LiveRepository(database, changes: .logicalReplication)
        defer { repository.close() }
        let refused = await #expect(throws: PostgresError.self) { try await repository.read(Item.self, id: 1) }
        #expect(refused?.message.contains("public.items, which the publication live_changes publishes as its partitions") == true, "\(String(describing: refused))")
        try await LiveSchema.publish("items", on: database)
        let item = try await repository.read(Item.self, id: 1)
        try await psql("UPDATE items SET name = 'uno' WHERE id = 1", database: database)
        #expect(try await eventually { item.value.name == "uno" })
    }

    @Test("a table published with a row filter is refused by reads and by LiveSchema.publish, in one line: rows outside the filter would never follow")
    func rowFilter() async throws {
        let database = try await TestServer.makeDatabase(replication: true)
        try await database.withConnection { try await $0.execute(script: """
            CREATE TABLE items (id bigint PRIMARY KEY, name text NOT NULL);
            INSERT INTO items VALUES (1, 'one'), (2, 'two');
            CREATE PUBLICATION live_changes; ALTER PUBLICATION live_changes ADD TABLE items WHERE (id > 1);
            """) }
        let repository = LiveRepository(database, changes: .logicalReplication)
        defer { repository.close() }
        let read = await #expect(throws: PostgresError.self) { try await repository.read(Item.self, id: 1) }
        #expect(read?.message.contains("public.items, which the publication live_changes filters by a WHERE") == true, "\(String(describing: read))")
        let query = await #expect(throws: PostgresError.self) { try await repository.readAll(Item.self) }
        #expect(query?.message.contains("filters by a WHERE") == true, "\(String(describing: query))")
        let published = await #expect(throws: PostgresError.self) { try await LiveSchema.publish("items", on: database) }
        #expect(published?.message.contains("with a row filter") == true && published?.message.contains("\n") == false, "\(String(describing: published))")
    }

    @Test("four tables published at once, five times over, with no publication at first: every call succeeds, every table is published")
    func concurrentPublish() async throws {
        let database = try await TestServer.makeDatabase(replication: true)
        let tables = ["t1", "t2", "t3", "t4"]
        try await database.withConnection { connection in
            for table in tables { try await connection.execute(script: "CREATE TABLE \(table) (id bigint PRIMARY KEY)") }
        }
        for _ in 0..<5 {
            try await database.query("DROP PUBLICATION IF EXISTS live_changes")
            try await withThrowingTaskGroup(of: Void.self) { group in
                for table in tables { group.addTask { try await LiveSchema.publish(table, on: database) } }
                try await group.waitForAll()
            }
            let published = try await database.query("SELECT tablename FROM pg_publication_tables WHERE pubname = 'live_changes' ORDER BY 1")
                .map { try $0.decode(String.self, at: 0) }
            #expect(published == tables)
        }
    }

    @Test("a role that owns a partitioned table but may not make the live schema publishes it all the same, without the partitions' TRUNCATE triggers; publishing again is fine")
    func publishWithoutCreate() async throws {
        let database = try await TestServer.makeDatabase(replication: true)
        defer { database.close() }
        let role = "owner_\(UInt32.random(in: 0...UInt32.max))"
        try await database.withConnection { try await $0.execute(script: """
            CREATE ROLE \(role) LOGIN PASSWORD 'role-pw';
            CREATE TABLE parts_owned (id bigint PRIMARY KEY, v text) PARTITION BY RANGE (id);
            CREATE TABLE parts_owned_low PARTITION OF parts_owned FOR VALUES FROM (0) TO (100);
            ALTER TABLE parts_owned OWNER TO \(role);
            ALTER TABLE parts_owned_low OWNER TO \(role);
            CREATE PUBLICATION owned_changes WITH (publish_via_partition_root = true);
            ALTER PUBLICATION owned_changes OWNER TO \(role);
            """) }
        let owner = Database(database.configuration.user(role, password: "role-pw"), maximumConnections: 1)
        defer { owner.close() }
        try await LiveSchema.publish("parts_owned", on: owner, publication: "owned_changes")
        try await LiveSchema.publish("parts_owned", on: owner, publication: "owned_changes")
        #expect(try await database.query("SELECT count(*) FROM pg_publication_tables WHERE pubname = 'owned_changes'")[0].decode(Int.self, at: 0) == 1)
        #expect(try await database.query("SELECT count(*) FROM pg_trigger WHERE tgname = 'live_stream_truncate' AND tgrelid = 'parts_owned_low'::regclass")[0].decode(Int.self, at: 0) == 0)
        // Made by a role that may (here, the test's): the partitions get them, and publishing again changes nothing.
        try await LiveSchema.publish("parts_owned", on: database, publication: "owned_changes")
        #expect(try await database.query("SELECT count(*) FROM pg_trigger WHERE tgname = 'live_stream_truncate' AND tgrelid = 'parts_owned_low'::regclass")[0].decode(Int.self, at: 0) == 1)
        try await LiveSchema.publish("parts_owned", on: owner, publication: "owned_changes")
    }
}
