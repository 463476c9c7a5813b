import Foundation
import Repository
import Testing

/// A `save()` that throws has not committed its write: where the server may store something
/// the record cannot hold, the returned row is decoded before `COMMIT`.
@Suite("A failed save() leaves nothing committed")
struct SaveRollbackTests {
    struct Slot: Record {
        static let tableName = "slots"
        var id: Int64
        var at: Date?          // a `time` column: a Date cannot hold one (PostgresTime can)
    }

    struct Guarded: Record {
        static let tableName = "guarded"
        var id: Int64
        var amount: Decimal
    }

    let database: Database
    let repository: LiveRepository

    init() async throws {
        database = try await TestServer.makeDatabase()
        try await database.withConnection { connection in
            try await connection.execute(script: """
                CREATE TABLE slots (id bigint PRIMARY KEY, at time);
                INSERT INTO slots VALUES (1, NULL);
                CREATE TABLE guarded (id bigint PRIMARY KEY, amount numeric NOT NULL);
                INSERT INTO guarded VALUES (1, 10);
                CREATE FUNCTION cap() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN IF NEW.amount > 1000 THEN NEW.amount := 'Infinity'; END IF; RETURN NEW; END $$;
                CREATE TRIGGER cap BEFORE UPDATE ON guarded FOR EACH ROW EXECUTE FUNCTION cap();
                """)
        }
        try await LiveSchema.enable("slots", on: database)
        try await LiveSchema.enable("guarded", on: database)
        repository = LiveRepository(database)
    }

    @Test("a value written into a column whose type the Swift property cannot read: thrown, rolled back, reverted")
    func unreadableType() async throws {
        let slot = try await repository.read(Slot.self, id: 1)
        slot[\.at].value = Date(timeIntervalSince1970: 3600)
        let error = await #expect(throws: LiveRecordError.self) { try await slot.save() }
        #expect("\(error.map { "\($0)" } ?? "")".contains("cannot decode PostgreSQL time as Swift Date"))
        #expect(try await database.query("SELECT at IS NULL FROM slots WHERE id = 1")[0].decode(Bool.self, at: 0))
        #expect(slot.value.at == nil)
    }

    @Test("a trigger storing what the record cannot hold (numeric Infinity into Decimal): thrown, rolled back, reverted")
    func triggerRewrite() async throws {
        let guarded = try await repository.read(Guarded.self, id: 1)
        guarded[\.amount].value = 5000
        let error = await #expect(throws: LiveRecordError.self) { try await guarded.save() }
        #expect("\(error.map { "\($0)" } ?? "")".contains("Decimal has no infinity"))
        #expect(try await database.query("SELECT amount FROM guarded WHERE id = 1")[0].decode(Decimal.self, at: 0) == 10)
        #expect(guarded.value.amount == 10)
        guarded[\.amount].value = 20
        try await guarded.save()
        #expect(try await database.query("SELECT amount FROM guarded WHERE id = 1")[0].decode(Decimal.self, at: 0) == 20)
    }
}
