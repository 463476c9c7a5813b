import Foundation
@testable import Repository
import Testing

/// An edit of a `jsonb` object column writes the members it changed, not the document: members
/// the Swift type does not declare — another program's — stay, also when added meanwhile.
@Suite("jsonb edits write the members they changed")
struct JSONBPatchTests {
    struct Settings: Codable, Equatable, Sendable {
        var theme: String
        var fontSize: Int?
    }

    struct Profile: Record, Equatable {
        static let tableName = "profiles"
        var id: Int64
        var settings: Settings
        var copy: Settings
        var note: String
    }

    struct Item: Codable, Equatable, Sendable {
        var name: String
    }

    /// A type that reads a bare string as its theme, and always writes an object.
    struct Lenient: Codable, Equatable, Sendable {
        var theme: String
        init(theme: String) { self.theme = theme }
        init(from decoder: any Decoder) throws {
            if let bare = try? decoder.singleValueContainer().decode(String.self) { theme = bare; return }
            theme = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .theme)
        }
    }

    struct Shelf: Record, Equatable {
        static let tableName = "shelves"
        var id: Int64
        var items: [Item]
        var look: Lenient
    }

    @Test("the patch of two objects: members set and removed, names with escapes, nested values and spaces kept as written")
    func patches() throws {
        let patch = try #require(JSONBPatch(from: #"{"a": 1, "b\"q": {"x": [1, "}"]}, "gone": null}"#,
                                            to: #"{"a":1,"b\"q":{"x":[2]},"new":"v, }"}"#))
        #expect(patch.set == #"{"b\"q":{"x":[2]},"new":"v, }"}"#)
        #expect(patch.removed == ["gone"])
        #expect(JSONBPatch(from: #"{"\u00e9":1}"#, to: "{}")?.removed == ["é"])
        #expect(JSONBPatch(from: "{}", to: "{}") == JSONBPatch(from: #"{"a":1}"#, to: #"{"a":1}"#))
        // By bytes, as jsonb compares: a precomposed é is another value, and another name, than e and an accent.
        #expect(JSONBPatch(from: #"{"t":"Cafe\#u{301}"}"#, to: #"{"t":"Caf\#u{E9}"}"#)?.set == #"{"t":"Caf\#u{E9}"}"#)
        #expect(JSONBPatch(from: #"{"e\#u{301}":1}"#, to: #"{"\#u{E9}":1}"#) == JSONBPatch(set: #"{"\#u{E9}":1}"#, removed: ["e\u{301}"]))
        // A name that begins with a combining mark keeps it; of a name given twice, the last counts.
        #expect(JSONBPatch(from: #"{"\#u{301}a":1,"a":2}"#, to: #"{"a":2}"#)?.removed == ["\u{301}a"])
        #expect(JSONBPatch(from: #"{"a":2}"#, to: #"{"a":1,"a":2}"#) == JSONBPatch(set: "{}", removed: []))
        #expect(JSONBPatch(from: #"{"a":2}"#, to: #"{"a":2,"a":1}"#)?.set == #"{"a":1}"#)
        for (base, edited) in [("[1]", "{}"), ("{}", "[1]"), ("{", "{}"), (#"{"a"}"#, "{}"), (#"{"a":1,}"#, "{}"), ("{} x", "{}"), ("null", "{}")] {
            #expect(JSONBPatch(from: base, to: edited) == nil, "\(base) → \(edited)")
        }
    }

    @Test("members the type does not declare survive an edit — one another process added meanwhile too; a json column is written whole")
    func undeclaredMembersStay() async throws {
        let database = try await TestServer.makeDatabase()
        defer { database.close() }
        try await database.withConnection { try await $0.execute(script: """
            CREATE TABLE profiles (id bigint PRIMARY KEY, settings jsonb NOT NULL, copy json NOT NULL, note text NOT NULL);
            INSERT INTO profiles VALUES (1, '{"theme": "light", "fontSize": 12, "beta": true}', '{"theme": "light", "beta": true}', '');
            """) }
        try await LiveSchema.enable("profiles", on: database)
        let repository = LiveRepository(database)
        defer { repository.close() }
        let profile = try await repository.read(Profile.self, id: 1)

        // Another program adds a member this type does not declare, and changes one it does.
        try await database.query(#"UPDATE profiles SET settings = settings || '{"layout": "grid", "theme": "blue"}'"#)
        #expect(try await eventually { profile.value.settings.theme == "blue" })
        profile.update { $0.settings.fontSize = nil; $0.copy.theme = "dark"; $0.note = "edited" }
        try await profile.save()
        let stored = try await database.query("SELECT settings::text, copy::text, note FROM profiles WHERE id = 1")[0]
        #expect(try stored.decode(String.self, at: 0) == #"{"beta": true, "theme": "blue", "layout": "grid"}"#)
        #expect(try stored.decode(String.self, at: 1) == #"{"theme":"dark"}"#)  // json: no patch, the type's members only
        #expect(try stored.decode(String.self, at: 2) == "edited")

        // An edit made while another process writes the row: the write conflicts on its
        // version, is made again over theirs, and both programs' members are kept.
        try await database.transaction { connection in
            try await connection.query(#"UPDATE profiles SET settings = settings || '{"other": 1}'"#)
            profile[\.settings.theme].value = "dark"
        }
        try await profile.save()
        let merged = try await database.query("SELECT settings::text FROM profiles WHERE id = 1")[0].decode(String.self, at: 0)
        #expect(merged == #"{"beta": true, "other": 1, "theme": "dark", "layout": "grid"}"#)
        #expect(try await eventually { profile.value.settings == Settings(theme: "dark", fontSize: nil) })
    }

    @Test("an empty array of structs is written as [], not patched; a row holding no object where the type writes one takes the whole document")
    func notObjects() async throws {
        let database = try await TestServer.makeDatabase()
        defer { database.close() }
        try await database.withConnection { try await $0.execute(script: """
            CREATE TABLE shelves (id bigint PRIMARY KEY, items jsonb NOT NULL, look jsonb NOT NULL);
            INSERT INTO shelves VALUES (1, '[]', '"dark"');
            """) }
        try await LiveSchema.enable("shelves", on: database)
        let repository = LiveRepository(database)
        defer { repository.close() }
        let shelf = try await repository.read(Shelf.self, id: 1)
        #expect(shelf.value.look == Lenient(theme: "dark"))
        // Edited and undone before the write: the column is written, as it was.
        shelf.update { $0.items.append(Item(name: "x")) }
        shelf.update { $0.items.removeAll(); $0.look.theme = "light" }
        try await shelf.save()
        let stored = try await database.query("SELECT items::text, look::text FROM shelves WHERE id = 1")[0]
        #expect(try stored.decode(String.self, at: 0) == "[]")
        #expect(try stored.decode(String.self, at: 1) == #"{"theme": "light"}"#)
    }
}
