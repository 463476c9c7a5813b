import Foundation
@testable import Repository
import Testing

/// Row versions are PostgreSQL's `xmin` (migration 0005): the cases where a transaction id
/// alone would not tell a handle that its row moved on.
@Suite("Row versions from xmin")
struct RowVersionTests {
    let database: Database
    let repository: LiveRepository

    init() async throws {
        database = try await makeContactsDatabase()
        repository = LiveRepository(database)
    }

    @Test("a trigger that changes the row again after our write, in its transaction: the handle takes the final row")
    func triggerChangesTheRowAgain() async throws {
        // Our UPDATE's RETURNING shows the row before the trigger's UPDATE; both leave the same xmin.
        try await database.withConnection { connection in
            try await connection.execute(script: """
                CREATE FUNCTION contacts_derive_email() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    UPDATE contacts SET email = lower(NEW.name) || '@derived.example' WHERE id = NEW.id;
                    RETURN NULL;
                END $$;
                CREATE TRIGGER contacts_derive_email AFTER UPDATE OF name ON contacts
                    FOR EACH ROW WHEN (pg_trigger_depth() = 0) EXECUTE FUNCTION contacts_derive_email();
                """)
        }
        let ada = try await repository.read(Contact.self, id: 1)
        ada[\.name].value = "Ada Lovelace"
        try await ada.save()
        #expect(try await eventually { ada.value.email == "ada lovelace@derived.example" }, "\(ada.value)")
    }

    @Test("an update announced by a transaction's second statement says version 0: never taken for a version held")
    func secondStatementIsUnknown() async throws {
        let listener = try await RawListener(database: database.name(), channel: "live_changes")
        try await psql("BEGIN; UPDATE contacts SET name = 'one' WHERE id = 1; UPDATE contacts SET name = 'two' WHERE id = 1; COMMIT;",
                       database: database)
        let versions = try (0..<2).map { _ in
            let payload = try #require(listener.next())
            return try #require(Announcement.fastParse(payload)?.version)
        }
        #expect(versions[0] != 0 && versions[1] == 0)
    }

    @Test("a key changed within a partition, across partitions, and by a BEFORE trigger: the old key's handle reports deleted; a partition's own writes are announced")
    func changedKeys() async throws {
        struct Part: Record, Equatable {
            static let tableName = "parts"
            var id: Int64
            var name: String
        }
        try await database.withConnection { connection in
            try await connection.execute(script: """
                CREATE TABLE parts (id bigint PRIMARY KEY, name text NOT NULL) PARTITION BY RANGE (id);
                CREATE TABLE parts_low PARTITION OF parts FOR VALUES FROM (0) TO (100);
                CREATE TABLE parts_high PARTITION OF parts FOR VALUES FROM (100) TO (1000);
                SELECT live.enable_change_notifications('parts');
                INSERT INTO parts VALUES (5, 'five'), (6, 'six'), (7, 'seven');
                CREATE FUNCTION parts_renumber() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF NEW.name = 'renumber' THEN NEW.id := NEW.id + 10; END IF;
                    RETURN NEW;
                END $$;
                CREATE TRIGGER parts_renumber BEFORE UPDATE ON parts_low FOR EACH ROW EXECUTE FUNCTION parts_renumber();
                """)
        }
        let five = try await repository.read(Part.self, id: 5)
        let six = try await repository.read(Part.self, id: 6)
        let seven = try await repository.read(Part.self, id: 7)
        try await psql("UPDATE parts SET id = 8 WHERE id = 5", database: database)
        try await psql("UPDATE parts SET id = 106 WHERE id = 6", database: database)
        try await psql("UPDATE parts SET name = 'renumber' WHERE id = 7", database: database)
        #expect(try await eventually { five.liveState == .deleted && six.liveState == .deleted && seven.liveState == .deleted })
        #expect(try await repository.read(Part.self, id: 17).value.name == "renumber")
        // A statement naming a partition is announced as the partitioned table.
        let moved = try await repository.read(Part.self, id: 106)
        try await psql("UPDATE parts_high SET name = 'direct' WHERE id = 106", database: database)
        #expect(try await eventually { moved.value.name == "direct" })
    }

    @Test("a write that changes no column sets one that may be assigned to itself; with none, a clear error")
    func touchColumn() async throws {
        struct Counter: Record {
            static let tableName = "counters"
            var id: Int64
            var doubled: Int64
            var label: String
        }
        struct Fixed: Record {
            static let tableName = "fixed"
            var id: Int64
        }
        try await database.withConnection { connection in
            try await connection.execute(script: """
                CREATE TABLE counters (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    doubled bigint GENERATED ALWAYS AS (id * 2) STORED, label text NOT NULL);
                INSERT INTO counters (label) VALUES ('one');
                CREATE TABLE fixed (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY);
                """)
        }
        let counters = try await RecordTable<Counter>.resolve(database)
        #expect(counters.touchColumn == "label")
        #expect(try await RecordTable<Contact>.resolve(database).touchColumn == "name")  // not the key
        let before = try await database.query("SELECT xmin FROM counters")[0].decode(Int64.self, at: 0)
        let (sql, parameters) = try counters.updateStatement(Counter(id: 1, doubled: 2, label: "one"), id: 1, properties: [], expectedVersion: before)
        #expect(try await database.query(sql, parameters).count == 1)
        #expect(try await database.query("SELECT xmin FROM counters")[0].decode(Int64.self, at: 0) != before)

        let fixed = try await RecordTable<Fixed>.resolve(database)
        #expect(fixed.touchColumn == nil)
        #expect(throws: PostgresError.self) { try fixed.updateStatement(Fixed(id: 1), id: 1, properties: [], expectedVersion: 1) }
    }

    @Test("a write's statement is built once per set of columns: the same text for the same columns, its own for others")
    func updateStatements() async throws {
        let contacts = try await RecordTable<Contact>.resolve(database)
        let (byName, nameValues) = try contacts.updateStatement(Contact(id: 7, name: "Ann", email: nil), id: 7, properties: ["name"], expectedVersion: 3)
        let (again, againValues) = try contacts.updateStatement(Contact(id: 8, name: "Bo", email: "b@x"), id: 8, properties: ["name"], expectedVersion: 4)
        let (both, bothValues) = try contacts.updateStatement(Contact(id: 8, name: "Bo", email: "b@x"), id: 8, properties: ["email", "name"], expectedVersion: 4)
        #expect(byName == again && byName != both)
        #expect(contacts.updates.count == 2)
        #expect(byName == #"UPDATE "public"."contacts" SET "name" = $3 WHERE "id" = $1 AND xmin = $2::xid RETURNING *, xmin AS "live.version""#)
        #expect(both == #"UPDATE "public"."contacts" SET "name" = $3, "email" = $4 WHERE "id" = $1 AND xmin = $2::xid RETURNING *, xmin AS "live.version""#)
        #expect(nameValues == [.text("7"), .text("3"), .text("Ann")])
        #expect(againValues == [.text("8"), .text("4"), .text("Bo")])
        #expect(bothValues == [.text("8"), .text("4"), .text("Bo"), .text("b@x")])
    }
}
