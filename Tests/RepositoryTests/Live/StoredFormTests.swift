import Foundation
import Repository
import Testing

/// The server may store a written value otherwise than it was sent — a `real` column rounds a
/// `Double`, a `BEFORE UPDATE` trigger rewrites it. An edit of the same column made while that
/// write is under way builds on our own write, not on another writer's: it is written, and
/// `save()` reports no conflict.
@Suite("An edit made while the server stores the column's last write otherwise")
struct StoredFormTests {
    struct Reading: Record {
        static let tableName = "readings"
        var id: Int64
        var amount: Double
        var label: String
    }

    let database: Database
    let repository: LiveRepository

    init() async throws {
        database = try await TestServer.makeDatabase()
        try await database.withConnection { try await $0.execute(script: """
            CREATE TABLE readings (id bigint PRIMARY KEY, amount real NOT NULL, label text NOT NULL);
            INSERT INTO readings VALUES (1, 0, 'a');
            CREATE FUNCTION shout() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN NEW.label := upper(NEW.label); RETURN NEW; END $$;
            CREATE TRIGGER shout BEFORE UPDATE ON readings FOR EACH ROW EXECUTE FUNCTION shout();
            """) }
        try await LiveSchema.enable("readings", on: database)
        repository = LiveRepository(database)
    }

    /// Makes `first` while another connection holds the row's lock, so that its write waits
    /// under way; makes `second` then, and lets the write go on.
    func editWhileWriting(_ handle: Var<Reading>, first: (Var<Reading>) -> Void, second: (Var<Reading>) -> Void) async throws {
        let locker = Database(database.configuration, maximumConnections: 1)
        defer { locker.close() }
        let name = try await database.name()
        try await locker.transaction { connection in
            try await connection.query("SELECT 1 FROM readings WHERE id = 1 FOR UPDATE")
            first(handle)
            #expect(try await eventually {
                try await TestServer.admin.value.query(
                    "SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'", [name]).count == 1
            })
            second(handle)
        }
    }

    @Test("a real column: 0.1 is stored as 0.100000001490116; 0.5, set meanwhile, is written")
    func roundedColumn() async throws {
        let handle = try await repository.read(Reading.self, id: 1)
        try await editWhileWriting(handle, first: { $0[\.amount].value = 0.1 }, second: { $0[\.amount].value = 0.5 })
        try await handle.save()
        #expect(try await database.query("SELECT amount::float8 FROM readings WHERE id = 1")[0].decode(Double.self, at: 0) == 0.5)
        #expect(handle.value.amount == 0.5)
    }

    @Test("a trigger upper-cases the label: 'p' is stored as 'P'; 'q', set meanwhile, is written (and stored as 'Q')")
    func rewritingTrigger() async throws {
        let handle = try await repository.read(Reading.self, id: 1)
        try await editWhileWriting(handle, first: { $0[\.label].value = "p" }, second: { $0[\.label].value = "q" })
        try await handle.save()
        #expect(try await database.query("SELECT label FROM readings WHERE id = 1")[0].decode(String.self, at: 0) == "Q")
        #expect(try await eventually { handle.value.label == "Q" })
    }
}
