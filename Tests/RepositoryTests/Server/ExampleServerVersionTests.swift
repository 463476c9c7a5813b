import AddressBookKit
import Foundation
@testable import Repository
import Testing

/// The example server's HTTP conventions over row versions, with curl: `ETag` from the rows'
/// `xmin`s, `If-Match` answered with 412 and the current value when the rows moved on, and a
/// 400 for a name the address book should not hold.
@Suite("Example server: versions", .enabled(if: ExampleServer.isBuilt))
struct ExampleServerVersionTests {
    /// A response as curl shows it with `-i`.
    struct Reply {
        var status: Int
        var headers: [String: String]
        var body: String
    }

    func request(_ arguments: String...) async throws -> Reply { try await request(arguments) }

    func request(_ arguments: [String]) async throws -> Reply {
        let output = try await ExampleServer.curl(["-i"] + arguments)
        let parts = output.components(separatedBy: "\r\n\r\n")
        let head = parts[0].components(separatedBy: "\r\n")
        let status = head.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        let headers = Dictionary(head.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }) { $1 }
        return Reply(status: status, headers: headers, body: parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    /// `"<person's xmin>.<each address's xmin>"`, as the ETag should say.
    func expectedTag(_ id: Int64, _ database: Database) async throws -> String {
        let root = try await database.query("SELECT xmin::text FROM people WHERE id = $1", [id])[0].decode(String.self, at: 0)
        let children = try await database.query("SELECT xmin::text FROM addresses WHERE person_id = $1 ORDER BY position", [id])
            .map { try $0.decode(String.self, at: 0) }
        return "\"" + ([root] + children).joined(separator: ".") + "\""
    }

    func patch(_ url: String, name: String, ifMatch: String? = nil) async throws -> Reply {
        let condition = ifMatch.map { ["-H", "If-Match: \($0)"] } ?? []
        let body = String(decoding: try JSONEncoder().encode(["name": name]), as: UTF8.self)
        return try await request(["-X", "PATCH", "-H", "Content-Type: application/json"] + condition + ["-d", body, url])
    }

    @Test("GET sends the rows' versions as ETag; PATCH with If-Match writes when it matches, else 412 with the current value; 400 for an empty name")
    func entityTags() async throws {
        let database = try await TestServer.makeDatabase()
        try await AddressBook.migrate(database)
        let ada = try await AddressBook(database).addPerson(name: "Ada", streets: ["12 St James's Square", "Ockham Park"])
        let id = ada.value.id
        let server = try await ExampleServerProcess(databaseURL: try await TestServer.connectionString(database: database.name()))
        let url = "\(server.base)/people/\(id)"

        let first = try await request(url)
        #expect(first.status == 200 && first.body.contains("Ockham Park"))
        #expect(first.headers["etag"] == (try await expectedTag(id, database)))
        let tag = try #require(first.headers["etag"])

        // A matching If-Match writes, and the answer carries the new version.
        let renamed = try await patch(url, name: "Ada Lovelace", ifMatch: tag)
        #expect(renamed.status == 200 && renamed.body.contains("Ada Lovelace"), "\(renamed)")
        #expect(renamed.headers["etag"] == (try await expectedTag(id, database)) && renamed.headers["etag"] != tag)
        let current = try #require(renamed.headers["etag"])

        // psql changes an address: once the server has read it, the old tag no longer matches.
        try await psql("UPDATE addresses SET street = 'Horsley Towers' WHERE person_id = \(id) AND position = 1", database: database)
        #expect(try await eventually { try await request(url).body.contains("Horsley Towers") })
        let moved = try await patch(url, name: "Ada King", ifMatch: current)
        #expect(moved.status == 412, "\(moved)")
        #expect(moved.body.contains("Horsley Towers") && moved.body.contains("Ada Lovelace"), "the current value: \(moved.body)")
        #expect(moved.headers["etag"] == (try await expectedTag(id, database)))
        #expect(try await database.query("SELECT name FROM people WHERE id = $1", [id])[0].decode(String.self, at: 0) == "Ada Lovelace")
        #expect(try await patch(url, name: "Ada King", ifMatch: "W/\(try #require(moved.headers["etag"]))").status == 412, "a weak tag never matches")
        #expect(try await patch(url, name: "Ada King", ifMatch: "\"1\", \(try #require(moved.headers["etag"]))").status == 200)
        #expect(try await patch(url, name: "Countess of Lovelace", ifMatch: "*").status == 200)

        let empty = try await patch(url, name: "  ")
        #expect(empty.status == 400 && empty.body.contains("a name cannot be empty"), "\(empty)")
        #expect(try await server.stop() == 0)
    }

    @Test("PATCHes of one person at once are taken in turns: with the same If-Match one writes and the rest get 412; without, each 200 names a name the row held; NUL is a 400 with its message")
    func concurrentPatches() async throws {
        let database = try await TestServer.makeDatabase()
        try await AddressBook.migrate(database)
        let id = try await AddressBook(database).addPerson(name: "Ada", streets: []).value.id
        try await database.query("CREATE TABLE seen (name text NOT NULL)")
        try await database.query("""
            CREATE FUNCTION record_name() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO seen VALUES (NEW.name); RETURN NEW; END $$;
            """)
        try await database.query("CREATE TRIGGER record_name AFTER UPDATE ON people FOR EACH ROW EXECUTE FUNCTION record_name()")
        let server = try await ExampleServerProcess(databaseURL: try await TestServer.connectionString(database: database.name()))
        let url = "\(server.base)/people/\(id)"
        let tag = try #require(try await request(url).headers["etag"])

        let conditional = try await withThrowingTaskGroup(of: Reply.self) { group in
            for index in 0..<12 { group.addTask { try await patch(url, name: "If \(index)", ifMatch: tag) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(conditional.filter { $0.status == 200 }.count == 1 && conditional.filter { $0.status == 412 }.count == 11,
                "\(conditional.map(\.status))")

        let plain = try await withThrowingTaskGroup(of: (String, Reply).self) { group in
            for index in 0..<12 { group.addTask { ("Plain \(index)", try await patch(url, name: "Plain \(index)")) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let committed = Set(try await database.query("SELECT name FROM seen").map { try $0.decode(String.self, at: 0) })
        for (name, reply) in plain {
            #expect(reply.status == 200 && reply.body.contains("\"\(name)\"") && committed.contains(name), "\(name): \(reply)")
        }

        let nul = try await patch(url, name: "Al\u{0}an")
        #expect(nul.status == 400 && nul.body.contains("NUL"), "\(nul)")
        #expect(try await server.stop() == 0)
    }
}
