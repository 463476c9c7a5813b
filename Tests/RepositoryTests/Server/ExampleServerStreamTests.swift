import AddressBookKit
import Foundation
@testable import Repository
import Testing

/// The example server's event streams over bare sockets: the list's stream (the whole list,
/// one event per change, resuming from `Last-Event-ID`), heartbeats, and streams whose clients
/// leave being closed — descriptors counted in `/proc`.
@Suite("Example server: event streams", .enabled(if: ExampleServer.isBuilt))
struct ExampleServerStreamTests {
    // Lines are split at any newline: chunk sizes come before them with "\r\n", one Character.

    /// The last event's `id:` in `text`.
    func lastEventID(_ text: String) -> String? {
        text.split(whereSeparator: \.isNewline).last { $0.hasPrefix("id: ") }.map { String($0.dropFirst(4)) }
    }

    /// The data lines of the events named `name` in `text`.
    func data(of name: String, in text: String) -> [String] {
        text.components(separatedBy: "\n\n").filter { $0.contains("event: \(name)\n") }
            .compactMap { $0.split(whereSeparator: \.isNewline).first { $0.hasPrefix("data: ") }.map { String($0.dropFirst(6)) } }
    }

    @Test("GET /people/events: the whole list, then one event per change; Last-Event-ID gets only what was missed, or the whole list; heartbeats")
    func listEvents() async throws {
        let database = try await TestServer.makeDatabase()
        try await AddressBook.migrate(database)
        let book = AddressBook(database)
        let ada = try await book.addPerson(name: "Ada", streets: [])
        let grace = try await book.addPerson(name: "Grace", streets: ["Arlington"])
        let alan = try await book.addPerson(name: "Alan", streets: [])
        let server = try await ExampleServerProcess(databaseURL: try await TestServer.connectionString(database: database.name()),
                                                    environment: ["HEARTBEAT_SECONDS": "0.5"])
        let client = try StreamClient(port: server.port)
        try client.get("/people/events")
        let opening = try await client.read(until: "event: snapshot")
        try await client.read(until: "\n\n", timeout: .seconds(30))
        #expect(opening.contains("text/event-stream") && opening.contains("retry: 1000"))
        let snapshot = try #require(data(of: "snapshot", in: client.text).first)
        #expect(snapshot.range(of: "\"Ada\"")!.lowerBound < snapshot.range(of: "\"Alan\"")!.lowerBound, "ordered by name")

        // One change, one event: the person with the id before them, nothing else.
        client.clear()
        try await psql("UPDATE people SET name = 'Zuse' WHERE id = \(ada.value.id)", database: database)
        try await client.read(until: "event: changes")
        try await client.read(until: "]}\n\n", timeout: .seconds(30))
        let change = try #require(data(of: "changes", in: client.text).first)
        #expect(change == #"{"people":[{"after":\#(grace.value.id),"person":{"addresses":[],"id":\#(ada.value.id),"name":"Zuse"}}],"removed":[]}"#)
        let seen = try #require(lastEventID(client.text))
        try await client.read(until: ": heartbeat\n\n", timeout: .seconds(30))
        client.close()

        // Missed while away: a rename and a deletion, sent as one event of just those.
        try await psql("UPDATE people SET name = 'Grace Hopper' WHERE id = \(grace.value.id)", database: database)
        try await psql("DELETE FROM people WHERE id = \(alan.value.id)", database: database)
        #expect(try await eventually {
            let list = try await ExampleServer.curl("\(server.base)/people")
            return list.contains("Grace Hopper") && !list.contains("Alan")
        })
        let back = try StreamClient(port: server.port)
        try back.get("/people/events", headers: ["Last-Event-ID": seen])
        try await back.read(until: "]}\n\n")
        #expect(data(of: "snapshot", in: back.text).isEmpty)
        #expect(data(of: "changes", in: back.text) == [
            #"{"people":[{"after":null,"person":{"addresses":[{"id":"\#(grace.value.addresses[0].id)","street":"Arlington"}],"id":\#(grace.value.id),"name":"Grace Hopper"}}],"removed":[\#(alan.value.id)]}"#,
        ])
        back.close()

        // An id this process did not give (another run's, say): the whole list.
        let stranger = try StreamClient(port: server.port)
        try stranger.get("/people/events", headers: ["Last-Event-ID": "elsewhere-3"])
        try await stranger.read(until: "event: snapshot")
        stranger.close()
        #expect(try await server.stop() == 0)
    }

    @Test("200 event streams whose clients leave are closed, on rows that never change: descriptors back to where they were")
    func abandonedStreams() async throws {
        let database = try await TestServer.makeDatabase()
        try await AddressBook.migrate(database)
        let ada = try await AddressBook(database).addPerson(name: "Ada", streets: [])
        let server = try await ExampleServerProcess(databaseURL: try await TestServer.connectionString(database: database.name()))
        /// Opens a stream on each path at once, and returns when each has its first event.
        func open(_ paths: [String]) async throws -> [StreamClient] {
            let clients = try paths.map { path in
                let client = try StreamClient(port: server.port)
                try client.get(path)
                return client
            }
            for client in clients { try await client.read(until: "data: ") }
            return clients
        }
        let person = "/people/\(ada.value.id)/events"
        // Warm up (the pool's connections, the person's live handle), then settle.
        for client in try await open(Array(repeating: person, count: 8) + ["/people/events"]) { client.close() }
        #expect(try await eventually { server.descriptors().http == 1 })
        let before = server.descriptors()

        let clients = try await open((0..<200).map { $0.isMultiple(of: 2) ? person : "/people/events" })
        let open = server.descriptors()
        #expect(open.http == before.http + 200)

        let dropped = ContinuousClock.now
        for client in clients { client.close() }
        let closed = try await eventually(timeout: .seconds(30)) {
            let now = server.descriptors()
            // The pool may have opened connections of its own meanwhile (8 at most).
            return now.http == before.http && now.all - now.http <= before.all - before.http + 8
        }
        let after = server.descriptors()
        let took = ContinuousClock.now - dropped
        print("Example server descriptors: before \(before.all) (\(before.http) on the HTTP port); with 200 streams \(open.all) (\(open.http));"
              + " after the clients left \(after.all) (\(after.http)), within \(took.formatted(.units(allowed: [.milliseconds])))")
        #expect(closed, "descriptors before \(before), with the streams \(open), 30 s after the clients left \(after)")
        #expect(try await server.stop() == 0)
    }

    @Test("a client that stays connected and stops reading falls behind: its stream ends once 32 events wait for it, rather than the server holding every change for it")
    func stalledClient() async throws {
        let database = try await TestServer.makeDatabase()
        try await AddressBook.migrate(database)
        // Each change is an event of the whole list of address counts: about 100 KB.
        try await database.query("INSERT INTO people (name) SELECT 'Person ' || lpad(g::text, 5, '0') FROM generate_series(1, 3000) g")
        let server = try await ExampleServerProcess(databaseURL: try await TestServer.connectionString(database: database.name()))
        let client = try StreamClient(port: server.port, receiveBuffer: 4096)
        try client.get("/people/address-counts/events")
        let changes = 150
        for round in 1...changes {
            try await database.query("UPDATE people SET name = $1 WHERE id = 1", ["Renamed \(round)"])
            #expect(try await eventually { try await ExampleServer.curl("\(server.base)/people/address-counts").contains("Renamed \(round)\"") })
        }
        #expect(try await client.readUntilResponseEnds(timeout: .seconds(120)), "the stream of a client that fell behind ends")
        let events = client.text.components(separatedBy: "event: counts\n").count - 1
        #expect(events < changes, "\(events) events: the server held every change for a client that did not read")
    }
}
