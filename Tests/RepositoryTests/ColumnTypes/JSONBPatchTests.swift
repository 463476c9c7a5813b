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

    @Test("the patch of two objects: members set and removed, names with escapes, nested values and spaces kept as written")
    func patches() throws {
        let patch = try #require(JSONBPatch(from: #"{"a": 1, "b\"q": {"x": [1, "}"]}, "gone": null}"#,
                                            to: #"{"a":1,"b\"q":{"x":[2]},"new":"v, }"}"#))
        #expect(patch.set == #"{"b\"q":{"x":[2]},"new":"v, }"}"#)
        #expect(patch.removed == ["gone"])
        #expect(JSONBPatch(from: #"{"\u00e9":1}"#, to: "{}")?.removed == ["é"])
        #expect(JSONBPatch(from: "{}", to: "{}") == JSONBPatch(from: #"{"a":1}"#, to: #"{"a":1}"#))
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
}
