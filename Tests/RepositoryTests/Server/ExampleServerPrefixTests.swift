import AddressBookKit
import Foundation
@testable import Repository
import Testing

/// `GET /people/events?prefix=…`: each client its own live query. Hundreds of clients at once;
/// one rename reaches exactly the clients whose prefix it matches.
@Suite("Example server: a live query per client", .enabled(if: ExampleServer.isBuilt))
struct ExampleServerPrefixTests {
    /// The server process's resident memory, from `/proc`.
    func residentBytes(_ server: ExampleServerProcess) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(server.child.pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
        return (line?.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0) * 1024
    }

    @Test("400 clients, each with its own prefix query: the snapshot is theirs, a rename reaches those it matches and only them, LIKE's wildcards are literal")
    func prefixStreams() async throws {
        let database = try await TestServer.makeDatabase()
        try await AddressBook.migrate(database)
        let book = AddressBook(database)
        for name in ["Ada", "Alan", "Grace", "100%_sure"] { _ = try await book.addPerson(name: name, streets: []) }
        let server = try await ExampleServerProcess(databaseURL: try await TestServer.connectionString(database: database.name()))

        // Wildcards in a prefix are the characters themselves.
        let percent = try StreamClient(port: server.port), one = try StreamClient(port: server.port)
        try percent.get("/people/events?prefix=100%25_")
        try one.get("/people/events?prefix=1%25")
        try await percent.read(until: "]}\n\n")
        try await one.read(until: "]}\n\n")
        #expect(percent.text.contains(#"{"people":[{"id":"#) && percent.text.contains(#""name":"100%_sure"}]}"#))
        #expect(one.text.contains(#"data: {"people":[]}"#))

        // 400 clients: half follow "Ad", half "Gr"; each opening is its own live query.
        let memoryBefore = residentBytes(server)
        let clients = try (0..<400).map { index in
            let client = try StreamClient(port: server.port)
            try client.get("/people/events?prefix=\(index.isMultiple(of: 2) ? "Ad" : "Gr")")
            return client
        }
        for client in clients { try await client.read(until: "]}\n\n") }
        let bytesPerClient = (residentBytes(server) - memoryBefore) / clients.count
        for (index, client) in clients.enumerated() {
            #expect(client.text.contains(index.isMultiple(of: 2) ? #""name":"Ada""# : #""name":"Grace""#))
            #expect(!client.text.contains(#""name":"Alan""#))
            client.clear()
        }

        // Grace becomes Adele: she enters every "Ad" list (after Ada) and leaves every "Gr" list.
        let renamed = ContinuousClock.now
        try await psql("UPDATE people SET name = 'Adele' WHERE name = 'Grace'", database: database)
        var latencies: [Duration] = []
        for client in clients {
            try await client.read(until: "event: changes")
            try await client.read(until: "]}\n\n", timeout: .seconds(30))
            latencies.append(ContinuousClock.now - renamed)
        }
        for (index, client) in clients.enumerated() {
            if index.isMultiple(of: 2) {
                #expect(client.text.contains(#""name":"Adele"}}],"removed":[]}"#), "\(client.text)")
            } else {
                #expect(client.text.contains(#"{"people":[],"removed":["#), "\(client.text)")
            }
        }
        #expect(!percent.text.contains("event: changes") && !one.text.contains("event: changes"))
        latencies.sort()
        print("Example server, a live query per client: 400 clients opened (\(bytesPerClient) bytes of the server's resident memory each);"
              + " one rename reached all 400 within \(latencies.last!.formatted(.units(allowed: [.milliseconds])))"
              + " (the clients read in turn: the 200th by \(latencies[199].formatted(.units(allowed: [.milliseconds])))")
        for client in clients + [percent, one] { client.close() }
        #expect(try await server.stop() == 0)
    }
}
