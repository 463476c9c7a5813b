import AddressBookKit
import Foundation
@testable import Repository
import Testing

/// The example server while its database refuses connections: requests that need the
/// database answer 503 with `Retry-After` and one line — not 500 — and work again after.
@Suite("Example server: the database unavailable", .enabled(if: ExampleServer.isBuilt))
struct ExampleServerOutageTests {
    /// The status line's code, the `Retry-After` header and the body of a GET.
    func get(_ url: String) async throws -> (status: Int, retryAfter: String?, body: String) {
        let output = try await ExampleServer.curl("-i", "--max-time", "15", url)
        let (head, body) = output.range(of: "\r\n\r\n").map { (String(output[..<$0.lowerBound]), String(output[$0.upperBound...])) } ?? (output, "")
        let lines = head.split(separator: "\r\n")
        let status = lines.first.flatMap { $0.split(separator: " ").dropFirst().first }.flatMap { Int($0) } ?? 0
        let retryAfter = lines.first { $0.lowercased().hasPrefix("retry-after:") }.map { $0.dropFirst("retry-after:".count).trimmingCharacters(in: .whitespaces) }
        return (status, retryAfter, body)
    }

    @Test("Connections refused and the server's backends ended: a person the server holds answers from memory, an id it must read, a client's own live query and a PATCH answer 503, Retry-After 1, one line; once connections are allowed again, 200")
    func databaseRefusesConnections() async throws {
        let database = try await TestServer.makeDatabase()
        try await AddressBook.migrate(database)
        let ada = try await AddressBook(database).addPerson(name: "Ada").value.id
        let other = try await TestServer.makeDatabase()  // from where the first is shut and opened again
        let name = try await database.name()
        let server = try await ExampleServerProcess(databaseURL: try await TestServer.connectionString(database: name))

        try await psql("ALTER DATABASE \(SQLIdentifier.quoted(name)) ALLOW_CONNECTIONS false; "
                       + "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(name)'", database: other)
        #expect(try await get("\(server.base)/people/\(ada)").status == 200)  // everyone's live query holds Ada
        for path in ["/people/\(ada + 1000)", "/people/events?prefix=A"] {
            let answer = try await get("\(server.base)\(path)")
            #expect(answer.status == 503, "\(path): \(answer)")
            #expect(answer.retryAfter == "1", "\(path)")
            #expect(answer.body == #"{"error":{"message":"the database is unavailable; try again"}}"#, "\(path)")
        }
        // A write the database cannot take: 503 and Retry-After as well, with what became of it.
        let patch = try await ExampleServer.curl("-i", "--max-time", "15", "-X", "PATCH", "-H", "Content-Type: application/json",
                                                 "-d", #"{"name":"Ada Lovelace"}"#, "\(server.base)/people/\(ada)")
        #expect(patch.hasPrefix("HTTP/1.1 503"), "\(patch)")
        #expect(patch.lowercased().contains("retry-after: 1"), "\(patch)")
        #expect(patch.contains("the name was not saved"), "\(patch)")

        try await psql("ALTER DATABASE \(SQLIdentifier.quoted(name)) ALLOW_CONNECTIONS true", database: other)
        let missing = try await eventually { try await get("\(server.base)/people/\(ada + 1000)").status == 404 }
        #expect(missing)
        let body = try await ExampleServer.curl("--max-time", "3", "\(server.base)/people/events?prefix=A")
        #expect(body.contains(#""name":"Ada""#), "\(body)")
    }
}
