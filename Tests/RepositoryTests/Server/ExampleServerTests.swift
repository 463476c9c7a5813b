import AddressBookKit
import Foundation
@testable import Repository
import Testing

/// `Examples/LiveServer` end to end, with curl against a real PostgreSQL: JSON reads, a PATCH
/// written through a live handle, a 409 with both values, and a psql change arriving on an open
/// event stream. `.ci/run` builds the example first; without the build this suite does not run.
@Suite("Example server", .enabled(if: ExampleServer.isBuilt))
struct ExampleServerTests {
    @Test("GET, HEAD, PATCH (200 and 409), Server-Sent Events of changes made elsewhere, a deletion ending them, 404, and a clean SIGTERM")
    func endToEnd() async throws {
        let database = try await TestServer.makeDatabase()
        let url = try await TestServer.connectionString(database: database.name())
        let book = AddressBook(database)
        try await AddressBook.migrate(database)
        let ada = try await book.addPerson(name: "Ada", streets: ["12 St James's Square"])
        let id = ada.value.id
        let port = try FreePort.find()
        let base = "http://127.0.0.1:\(port)"
        let server = try ChildProcess(ExampleServer.binary, [], environment: ProcessInfo.processInfo.environment.merging(
            ["DATABASE_URL": url, "PORT": String(port), "LOG_LEVEL": "warning"]) { $1 })
        defer { if server.exitStatusIfExited() == nil { kill(server.pid, SIGKILL); _ = server.wait() } }
        #expect(try await eventually(timeout: .seconds(60)) { try await ExampleServer.curl("\(base)/people").contains("Ada") })

        let one = try JSONDecoder().decode(AddressBookKit.Person.self, from: Data(try await ExampleServer.curl("\(base)/people/\(id)").utf8))
        #expect(one.name == "Ada" && one.addresses.map(\.street) == ["12 St James's Square"])
        #expect(try await ExampleServer.curl("-o", "/dev/null", "-w", "%{http_code}", "\(base)/people/999999") == "404")
        // HEAD answers as GET does, headers only.
        let head = try await ExampleServer.curl("-I", "\(base)/people/\(id)")
        #expect(head.hasPrefix("HTTP/1.1 200") && head.lowercased().contains("etag:") && !head.contains("Ada"), "\(head)")
        #expect(try await ExampleServer.curl("-I", "-o", "/dev/null", "-w", "%{http_code}", "\(base)/people/999999") == "404")

        let patched = try await ExampleServer.curl("-X", "PATCH", "-H", "Content-Type: application/json", "-d", #"{"name":"Ada Lovelace"}"#, "\(base)/people/\(id)")
        #expect(patched.contains("Ada Lovelace"), "\(patched)")
        #expect(try await database.query("SELECT name FROM people WHERE id = $1", [id])[0].decode(String.self, at: 0) == "Ada Lovelace")

        // An open event stream hears a psql UPDATE and another process's edit.
        let events = try ChildProcess(ExampleServer.curl!, ["-s", "-N", "\(base)/people/\(id)/events"], environment: [:])
        let lines = Recorder<String>()
        events.readOutputLines { lines.append($0) }
        defer { kill(events.pid, SIGKILL); _ = events.wait() }
        #expect(try await eventually { lines.all.contains { $0.hasPrefix("data: ") && $0.contains("Ada Lovelace") } })
        try await psql("UPDATE people SET name = 'Countess of Lovelace' WHERE id = \(id)", database: database)
        #expect(try await eventually { lines.all.contains { $0.contains("Countess of Lovelace") } })
        let other = try await AddressBook(database).readPerson(id: id)
        other[\.addresses].value.append(AddressBookKit.Address(street: "Ockham Park"))
        try await other.save()
        #expect(try await eventually { lines.all.contains { $0.contains("Ockham Park") } })

        // A conflict: another session changes the name while the PATCH waits for its row lock.
        let locker = Database(database.configuration, maximumConnections: 1)
        let patchStarted = ContinuousClock.now
        let outcome = try await locker.transaction { connection in
            try await connection.query("UPDATE people SET name = 'Augusta' WHERE id = $1", [id])
            // Waits for the lock until the transaction ends, after the wait below (slow under
            // TSan, or with both cores busy): curl's limit leaves room for that window.
            let patch = try ChildProcess(ExampleServer.curl!, ["-sS", "-D", "-", "--max-time", "300", "-w", "\n%{http_code}", "-X", "PATCH", "-H", "Content-Type: application/json",
                                                      "-d", #"{"name":"Ada King"}"#, "\(base)/people/\(id)"], environment: [:])
            let name = try await database.name()
            #expect(try await eventually {
                try await TestServer.admin.value.query(
                    "SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' AND query LIKE 'UPDATE%'", [name]).count == 1
            })
            return patch
        }
        let lockHeld = ContinuousClock.now - patchStarted
        let completion = await outcome.completion()
        let response = String(decoding: completion.output, as: UTF8.self)
        // On failure: curl's exit status and error, how long the row was locked, how long the PATCH took.
        let diagnosis = "curl exit \(completion.status), \(String(decoding: completion.errors, as: UTF8.self)); lock held \(lockHeld), "
            + "answered after \(ContinuousClock.now - patchStarted): \(response)"
        #expect(response.hasSuffix("409"), "\(diagnosis)")
        #expect(response.contains("Ada King") && response.contains("Augusta") && response.contains("\"columns\":[\"name\"]"), "\(response)")
        locker.close()
        // The 409 is tagged with the version that won: a retry with it is taken.
        let tag = try #require(response.split(separator: "\r\n").first { $0.lowercased().hasPrefix("etag:") }?.dropFirst(5)
            .trimmingCharacters(in: .whitespaces), "\(response)")
        let retry = try ChildProcess(ExampleServer.curl!, ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "PATCH", "-H", "Content-Type: application/json",
                                                  "-H", "If-Match: \(tag)", "-d", #"{"name":"Ada King"}"#, "\(base)/people/\(id)"], environment: [:])
        #expect(String(decoding: await retry.completion().output, as: UTF8.self) == "200")

        // A name the database refuses (a constraint): 422 with its reason, not 503 — no retry helps.
        try await database.query("ALTER TABLE people ADD CONSTRAINT no_forbidden CHECK (name <> 'forbidden')")
        let refused = try await ExampleServer.curl("-s", "-w", "\n%{http_code}", "-X", "PATCH", "-H", "Content-Type: application/json",
                                                   "-d", #"{"name":"forbidden"}"#, "\(base)/people/\(id)")
        #expect(refused.hasSuffix("422") && refused.contains("the database refused it") && refused.contains("no_forbidden"), "\(refused)")
        #expect(try await database.query("SELECT name FROM people WHERE id = $1", [id])[0].decode(String.self, at: 0) == "Ada King")
        try await database.query("ALTER TABLE people DROP CONSTRAINT no_forbidden")

        // Deleted by psql: the person's stream says so, and ends.
        try await psql("DELETE FROM people WHERE id = \(id)", database: database)
        #expect(try await eventually { lines.all.contains("event: deleted") && lines.all.contains("data: {\"id\":\(id)}") }, "\(lines.all.suffix(4))")
        #expect(try await eventually { events.exitStatusIfExited() != nil }, "the stream of a deleted person ends")

        kill(server.pid, SIGTERM)
        #expect(try await eventually { server.exitStatusIfExited() != nil })
        #expect(await server.exit() == 0)
    }
}
