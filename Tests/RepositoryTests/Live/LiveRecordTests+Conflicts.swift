import Foundation
@testable import Repository
import Testing

/// Conflicts made deterministic: another transaction holds the row while this repository's
/// UPDATE waits for it.
extension LiveRecordTests {
    /// See ``commitUnderneath(_:_:while:whileWaiting:)``.
    func commitUnderneath(_ sql: String, while edit: () -> Void, whileWaiting: () -> Void = {}) async throws {
        try await RepositoryTests.commitUnderneath(database, sql, while: edit, whileWaiting: whileWaiting)
    }

    @Test("a conflicting write to different columns is merged: both edits survive")
    func mergedConflict() async throws {
        let here = try await repository.read(Contact.self, id: 1)
        try await commitUnderneath("UPDATE contacts SET email = 'lovelace@example.com' WHERE id = 1") {
            here[\.name].value = "Countess of Lovelace"
        }
        try await here.save()
        let stored = try await row(1)
        #expect(stored.name == "Countess of Lovelace")
        #expect(stored.email == "lovelace@example.com")
        #expect(here.value.email == "lovelace@example.com")
    }

    @Test("the same field: the database wins and the conflict is reported")
    func sameFieldConflict() async throws {
        let here = try await repository.read(Contact.self, id: 2)
        try await commitUnderneath("UPDATE contacts SET name = 'Amazing Grace' WHERE id = 2") {
            here[\.name].value = "Rear Admiral"
        }
        let error = await #expect(throws: LiveRecordError.self) { try await here.save() }
        guard case .conflict(_, _, let columns, let ours, let theirs, .databaseWins) = error else {
            Issue.record("expected a conflict, got \(String(describing: error))")
            return
        }
        #expect(columns == ["name"])
        #expect((ours as? Contact)?.name == "Rear Admiral")
        #expect((theirs as? Contact)?.name == "Amazing Grace")
        #expect(here.value.name == "Amazing Grace")
        #expect(try await row(2).name == "Amazing Grace")
    }

    @Test("values merge, intents do not: the same value set on both sides is no conflict, so a read-modify-write across processes belongs in SQL")
    func sameValueBothSides() async throws {
        let here = try await repository.read(Contact.self, id: 2)
        let before = here.value.name
        // Another process and this one both append "!" to the name they read.
        try await commitUnderneath("UPDATE contacts SET name = name || '!' WHERE id = 2") {
            here.update { $0.name += "!" }
        }
        try await here.save()  // no conflict: both sides hold the same value
        #expect(try await row(2).name == before + "!")  // one append, not two (README: "Values merge, intents do not")
        // The database's own arithmetic holds across processes, and reaches the handle.
        try await database.query("UPDATE contacts SET name = name || '?' WHERE id = 2")
        #expect(try await eventually { here.value.name == before + "!?" })
    }

    @Test("an edit made while a write waits, of a column another writer changes first: reported, theirs kept")
    func unwrittenEditConflict() async throws {
        let here = try await repository.read(Contact.self, id: 3)
        try await commitUnderneath("UPDATE contacts SET name = 'Dijkstra' WHERE id = 3") {
            here[\.email].value = "ewd@example.com"   // this write waits for the other's lock…
        } whileWaiting: {
            here[\.name].value = "Edsger W."           // …while the name is edited too
        }
        let error = await #expect(throws: LiveRecordError.self) { try await here.save() }
        guard case .conflict(_, _, let columns, _, _, .databaseWins) = error else {
            Issue.record("expected a conflict, got \(String(describing: error))")
            return
        }
        #expect(columns == ["name"])
        try await here.save()
        #expect(try await row(3).name == "Dijkstra")
        #expect(try await row(3).email == "ewd@example.com")
        #expect(try await eventually { here.value.name == "Dijkstra" && here.value.email == "ewd@example.com" })
    }

    /// A record whose `name` property is stored in a column of another name.
    struct RenamedContact: Record, Equatable {
        static let tableName = "renamed_contacts"
        static var columnNaming: ColumnNaming { ColumnNaming { $0 == "name" ? "Display Name" : $0 } }
        var id: Int64
        var name: String
    }

    @Test("a conflict names the column, not the property, under a record's own column naming")
    func conflictNamesColumns() async throws {
        try await database.query(#"CREATE TABLE renamed_contacts (id bigint PRIMARY KEY, "Display Name" text NOT NULL)"#)
        try await database.query(#"INSERT INTO renamed_contacts VALUES (1, 'Ada')"#)
        try await LiveSchema.enable("renamed_contacts", on: database)
        let here = try await repository.read(RenamedContact.self, id: 1)
        try await commitUnderneath(#"UPDATE renamed_contacts SET "Display Name" = 'Lovelace' WHERE id = 1"#) {
            here[\.name].value = "Countess"
        }
        let error = await #expect(throws: LiveRecordError.self) { try await here.save() }
        guard case .conflict(_, _, let columns, _, _, .databaseWins) = error else {
            Issue.record("expected a conflict, got \(String(describing: error))")
            return
        }
        #expect(columns == ["Display Name"] && "\(error.map { "\($0)" } ?? "")".contains(#"another writer changed "Display Name" first"#), "\(String(describing: error))")
    }

    @Test("with localWins, the local value is written over the other writer's; the conflict is reported, save succeeds")
    func localWins() async throws {
        let insistent = LiveRepository(database, conflictPolicy: .localWins)
        let errors = ErrorLog(insistent)
        let here = try await insistent.read(Contact.self, id: 2)
        try await commitUnderneath("UPDATE contacts SET name = 'Amazing Grace' WHERE id = 2") {
            here[\.name].value = "Rear Admiral"
        }
        try await here.save()
        #expect(try await eventually { errors.errors.all.contains { $0.contains("another writer changed name first") } })
        #expect(try await row(2).name == "Rear Admiral")
        #expect(here.value.name == "Rear Admiral")
        insistent.close()
    }

    @Test("a write that a BEFORE UPDATE trigger skips (it returns NULL) fails in one line saying so, the value returns to the row's, and nothing is written")
    func skippedByTrigger() async throws {
        try await database.withConnection { connection in
            try await connection.execute(script: """
                CREATE FUNCTION refuse_renames() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN RETURN CASE WHEN NEW.name = OLD.name THEN NEW END; END $$;
                CREATE TRIGGER refuse_renames BEFORE UPDATE ON contacts FOR EACH ROW EXECUTE FUNCTION refuse_renames();
                """)
        }
        let here = try await repository.read(Contact.self, id: 1)
        here[\.name].value = "Countess"
        let error = await #expect(throws: LiveRecordError.self) { try await here.save() }
        let message = error.map { "\($0)" } ?? ""
        #expect(message.contains("the UPDATE matched no row") && message.contains("a trigger may hide it") && !message.contains("\n"), "\(message)")
        #expect(here.value.name == "Ada")
        #expect(try await row(1).name == "Ada")
        here[\.email].value = "countess@example.com"  // a change the trigger lets through
        try await here.save()
        #expect(try await row(1).email == "countess@example.com")
    }
}
