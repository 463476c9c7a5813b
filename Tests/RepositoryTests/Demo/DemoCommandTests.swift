import AddressBookKit
import Foundation
@testable import Repository
import Testing

private typealias BookPerson = AddressBookKit.Person

#if os(Linux)
private let isLinux = true
#else
private let isLinux = false
#endif

/// The `demo` executable end to end, against a real server, as separate processes.
@Suite("demo command")
struct DemoCommandTests {
    let database: Database
    let demo: DemoProcess

    init() async throws {
        database = try await TestServer.makeDatabase()
        demo = DemoProcess(environment: ["DATABASE_URL": try await TestServer.connectionString(database: database.name())])
    }

    @Test("add, list, show, rename, add and remove addresses, delete — with --json")
    func lifecycle() async throws {
        let ada = try await demo.json(BookPerson.self, "add", "Ada", "--street", "12 St James's Square", "--street", "Ockham Park", "--json")
        #expect(ada.name == "Ada" && ada.addresses.map(\.street) == ["12 St James's Square", "Ockham Park"])
        let grace = try await demo.json(BookPerson.self, "add", "Grace 'Amazing' Hopper; 🚢", "--json")
        #expect(try await demo.json([BookPerson].self, "list", "--json").map(\.name) == ["Ada", "Grace 'Amazing' Hopper; 🚢"])

        let table = try await demo.run("list")
        #expect(table.status == 0 && table.output.contains("Ockham Park") && table.output.contains("NAME"))
        #expect(try await demo.json(BookPerson.self, "show", "\(ada.id)", "--json") == ada)

        #expect(try await demo.json(BookPerson.self, "rename", "\(ada.id)", "Ada Lovelace", "--json").name == "Ada Lovelace")
        let moved = try await demo.json(BookPerson.self, "add-address", "\(grace.id)", "Arlington", "--json")
        #expect(moved.addresses.map(\.street) == ["Arlington"])
        let prefix = String(ada.addresses[0].id.uuidString.prefix(8))
        let trimmed = try await demo.json(BookPerson.self, "remove-address", "\(ada.id)", prefix, "--json")
        #expect(trimmed.addresses.map(\.street) == ["Ockham Park"])

        // Everything went through the database: another reader sees it.
        let stored = try await AddressBook(database).readPerson(id: ada.id).value
        #expect(stored == BookPerson(id: ada.id, name: "Ada Lovelace", addresses: [ada.addresses[1]]))

        let deleted = try await demo.run("delete", "\(grace.id)")
        #expect(deleted.status == 0)
        #expect(try await demo.json([BookPerson].self, "list", "--json").map(\.id) == [ada.id])
    }

    @Test("unknown ids and bad input: non-zero exit and one line on standard error")
    func errors() async throws {
        for arguments in [["show", "99"], ["rename", "99", "X"], ["delete", "99"], ["show", "abc"], ["add", "  "],
                          ["remove-address", "1", "nope"], ["frobnicate"], ["show"], ["show", "-1"], ["delete", "-7"]] {
            let run = try await demo.run(arguments)
            #expect(run.status != 0, "\(arguments)")
            #expect(run.errors.split(separator: "\n").count == 1, "\(arguments): \(run.errors)")
            #expect(run.errors.hasPrefix("demo: "), "\(arguments): \(run.errors)")
        }
        #expect(try await demo.run("show", "99").errors == "demo: no person has id 99\n")
        // Read as an option by the argument parser, a negative id is still named as what is wrong.
        #expect(try await demo.run("show", "-1").errors == "demo: '-1' is not an id: a person's id is a positive number, as `demo list` shows; an address's is its id's start, as `demo show` prints it\n")
        let someone = try await demo.json(BookPerson.self, "add", "Someone", "--json")
        let empty = try await demo.run("remove-address", "\(someone.id)", " ")
        #expect(empty.status != 0 && empty.errors.hasPrefix("demo: the address id must not be empty"), "\(empty.errors)")
    }

    @Test("a wrong DATABASE_URL is a one-line error that never shows the password")
    func wrongDatabase() async throws {
        let unreachable = DemoProcess(environment: ["DATABASE_URL": "postgres://ada:s3cret-pw@127.0.0.1:1/nowhere"])
        let run = try await unreachable.run("list")
        #expect(run.status != 0)
        #expect(!run.errors.contains("s3cret-pw") && !run.output.contains("s3cret-pw"))
        #expect(run.errors.split(separator: "\n").count == 1)
    }

    @Test("DATABASE_URL naming an application's database with its own people table: refused in one line, before anything is installed")
    func tablesInTheWay() async throws {
        let application = try await TestServer.makeDatabase()
        try await application.query("CREATE TABLE people (id serial PRIMARY KEY, login text NOT NULL)")
        let demo = DemoProcess(environment: ["DATABASE_URL": try await TestServer.connectionString(database: application.name())])
        let run = try await demo.run("list")
        #expect(run.status != 0)
        #expect(run.errors == "demo: this database already has a table people that the address book did not make; "
                + "nothing was changed: point DATABASE_URL at an empty database (createdb demo), or unset it to use the demo's own server\n")
        let schemas = try await application.query("SELECT count(*) FROM pg_namespace WHERE nspname = 'live'")
        #expect(try schemas[0].decode(Int64.self, at: 0) == 0)
        let history = try await application.query("SELECT to_regclass('schema_migrations') IS NULL")
        #expect(try history[0].decode(Bool.self, at: 0))
    }

    @Test("DATABASE_URL naming a database whose schema_migrations is an application's own: refused in one line, before anything is installed", arguments: ["0001_mine.sql", "20240101000000_mine.sql"])
    func historyInTheWay(file: String) async throws {
        let application = try await TestServer.makeDatabase()
        let directory = try MigrationDirectory([file: "-- migrate:up\nCREATE TABLE mine (i int);\n-- migrate:down\nDROP TABLE mine;\n"])
        defer { directory.remove() }
        try await Migrator(directory: directory.path).migrate(application)
        let demo = DemoProcess(environment: ["DATABASE_URL": try await TestServer.connectionString(database: application.name())])
        let run = try await demo.run("list")
        #expect(run.status != 0)
        #expect(run.errors == "demo: this database's migration history (schema_migrations) is another project's, not the address book's; "
                + "nothing was changed: point DATABASE_URL at an empty database (createdb demo), or unset it to use the demo's own server\n", "\(run.errors)")
        let schemas = try await application.query("SELECT count(*) FROM pg_namespace WHERE nspname = 'live'")
        #expect(try schemas[0].decode(Int64.self, at: 0) == 0, "the live schema was installed")
        #expect(try await application.query("SELECT count(*) FROM schema_migrations")[0].decode(Int64.self, at: 0) == 1)
    }

    @Test("with DATABASE_URL set, db stop and db reset act on the local server and say that DATABASE_URL's database is left alone")
    func localCommandsBesideDatabaseURL() async throws {
        let directory = FileManager.default.temporaryDirectory.path + "/demo-\(UInt32.random(in: 0...UInt32.max))"
        let beside = DemoProcess(environment: ["DEMO_DATA_DIRECTORY": directory, "DATABASE_URL": try await TestServer.connectionString(database: database.name())])
        for command in ["stop", "reset"] {
            let run = try await beside.run("db", command)
            #expect(run.status == 0 && run.output.contains("DATABASE_URL is set: demo uses that database, which this leaves alone."), "\(run.output)\(run.errors)")
            #expect(!run.output.contains("The next demo command"))
            struct Action: Decodable { var databaseURLLeftAlone: Bool? }
            #expect(try await beside.json(Action.self, "db", command, "--json").databaseURLLeftAlone == true)
        }
    }

    @Test("show prints addresses whose ids share their first 8 characters with as many more as tell them apart, and remove-address takes what it prints (a stranger's run got two alike)")
    func addressIDsAlike() async throws {
        let ada = try await demo.json(BookPerson.self, "add", "Ada", "--json")
        try await database.query("""
            INSERT INTO addresses (id, person_id, position, street) VALUES
            ('abcdef01-0000-4000-8000-000000000001', $1, 1, 'One'), ('abcdef01-0000-4000-8000-000000000002', $1, 2, 'Two')
            """, [Int64(ada.id)])
        let shown = try await demo.run("show", "\(ada.id)")
        let ids = shown.output.split(separator: "\n").compactMap { line in line.split(separator: " ").first.map(String.init) }.filter { $0.hasPrefix("abcdef01") }
        #expect(ids == ["abcdef01-0000-4000-8000-000000000001", "abcdef01-0000-4000-8000-000000000002"], "\(shown.output)")
        let removed = try await demo.json(BookPerson.self, "remove-address", "\(ada.id)", ids[1], "--json")
        #expect(removed.addresses.map(\.street) == ["One"])
        #expect(try await demo.run("show", "\(ada.id)").output.contains("abcdef01 "))
    }

    @Test("with DATABASE_URL naming the local server itself (as db url prints it), db stop and db reset say that they stop and delete its database, not that they leave it alone (a stranger's run lost a book so)")
    func databaseURLOfTheLocalServer() async throws {
        let directory = FileManager.default.temporaryDirectory.path + "/demo-\(UInt32.random(in: 0...UInt32.max))"
        let local = DemoProcess(environment: ["DEMO_DATA_DIRECTORY": directory])
        struct URL: Decodable { var url: String }
        struct Action: Decodable { var databaseURLLeftAlone: Bool? }
        for command in ["stop", "reset"] {
            let url = try await local.json(URL.self, "db", "url", "--json").url  // starts the local server
            let same = DemoProcess(environment: ["DEMO_DATA_DIRECTORY": directory, "DATABASE_URL": url])
            let run = try await same.run("db", command)
            #expect(run.status == 0 && run.output.contains("DATABASE_URL name") && !run.output.contains("leaves alone"), "\(run.output)\(run.errors)")
            _ = try await local.json(URL.self, "db", "url", "--json")
            #expect(try await same.json(Action.self, "db", command, "--json").databaseURLLeftAlone == false)
        }
        // The last reset deleted what the local server made there.
    }

    @Test("watch receives a rename made by another process, and a psql UPDATE, then exits cleanly on Ctrl-C")
    func watchFollowsOtherProcesses() async throws {
        let ada = try await demo.json(BookPerson.self, "add", "Ada", "--json")
        let (watcher, lines) = try demo.start("watch", "--json")
        defer { if watcher.exitStatusIfExited() == nil { kill(watcher.pid, SIGKILL); _ = watcher.wait() } }
        #expect(try await eventually(timeout: .seconds(30)) { lines.count >= 1 })  // the first view: it is live

        try await demo.succeeds("rename", "\(ada.id)", "Ada Lovelace")
        #expect(try await eventually { lines.all.contains { $0.contains("Ada Lovelace") && $0.contains("\"updated\":[\(ada.id)]") } })
        try await psql("UPDATE people SET name = 'Countess of Lovelace' WHERE id = \(ada.id)", database: database)
        #expect(try await eventually { lines.all.last?.contains("Countess of Lovelace") == true })
        try await demo.succeeds("add", "Grace")
        #expect(try await eventually { lines.all.last?.contains("Grace") == true })

        kill(watcher.pid, SIGINT)
        let status = Locked<Int32?>(nil)
        #expect(try await eventually { status.withLock { $0 = $0 ?? watcher.exitStatusIfExited(); return $0 != nil } })
        #expect(status.withLock { $0 } == 0)
    }

    @Test("watch follows a person deleted and inserted again by psql, in one transaction and in two, their version lower")
    func watchFollowsReinsertedRows() async throws {
        let ada = try await demo.json(BookPerson.self, "add", "Ada", "--json")
        for round in 1...3 { try await demo.succeeds("rename", "\(ada.id)", "Ada \(round)") }
        let (watcher, lines) = try demo.start("watch", "--json")
        defer { if watcher.exitStatusIfExited() == nil { kill(watcher.pid, SIGKILL); _ = watcher.wait() } }
        #expect(try await eventually(timeout: .seconds(30)) { lines.all.last?.contains("Ada 3") == true })
        try await psql("BEGIN; DELETE FROM people WHERE id = \(ada.id); INSERT INTO people (id, name) VALUES (\(ada.id), 'Ada reborn'); COMMIT;",
                       database: database)
        #expect(try await eventually { lines.all.last?.contains("Ada reborn") == true })
        try await psql("DELETE FROM people WHERE id = \(ada.id)", database: database)
        #expect(try await eventually { lines.all.last?.contains("Ada reborn") == false })
        try await psql("INSERT INTO people (id, name) VALUES (\(ada.id), 'Ada again')", database: database)
        #expect(try await eventually { lines.all.last?.contains("Ada again") == true })
    }

    @Test("watch ID follows one person and ends when they are deleted")
    func watchOnePerson() async throws {
        let ada = try await demo.json(BookPerson.self, "add", "Ada", "--json")
        let (watcher, lines) = try demo.start("watch", "\(ada.id)", "--json")
        defer { if watcher.exitStatusIfExited() == nil { kill(watcher.pid, SIGKILL); _ = watcher.wait() } }
        #expect(try await eventually(timeout: .seconds(30)) { lines.count >= 1 })
        try await demo.succeeds("add-address", "\(ada.id)", "Ockham Park")
        #expect(try await eventually { lines.all.last?.contains("Ockham Park") == true })
        try await demo.succeeds("delete", "\(ada.id)")
        let status = Locked<Int32?>(nil)
        #expect(try await eventually { status.withLock { $0 = $0 ?? watcher.exitStatusIfExited(); return $0 != nil } })
        #expect(status.withLock { $0 } == 0)
        #expect(try await eventually { lines.all.last == "{\"deleted\":\(ada.id)}" })
    }

    @Test("watch piped into head ends as soon as head has its line, while nothing changes (Linux)", .enabled(if: isLinux))
    func watchIntoHead() async throws {
        _ = try await demo.json(BookPerson.self, "add", "Ada", "--json")
        let pipeline = try demo.piped(intoHeadOf: 1, "watch", "--json")
        defer { if pipeline.exitStatusIfExited() == nil { kill(pipeline.pid, SIGKILL); _ = pipeline.wait() } }
        let status = Locked<Int32?>(nil)
        #expect(try await eventually { status.withLock { $0 = $0 ?? pipeline.exitStatusIfExited(); return $0 != nil } })
        #expect(status.withLock { $0 } == 0)
        let shown = await pipeline.completion()
        #expect(String(decoding: shown.output, as: UTF8.self).contains("\"Ada\""), "\(shown.text)")
    }

    @Test("two processes edit one person at once — one renames, the other adds an address — and both edits survive")
    func concurrentProcesses() async throws {
        let ada = try await demo.json(BookPerson.self, "add", "Ada", "--json")
        for round in 1...3 {
            async let renamed = Task.detached { [demo] in try await demo.run("rename", "\(ada.id)", "Ada \(round)") }.value
            async let added = Task.detached { [demo] in try await demo.run("add-address", "\(ada.id)", "Street \(round)") }.value
            let (rename, add) = try await (renamed, added)
            #expect(rename.status == 0, "\(rename.errors)")
            #expect(add.status == 0, "\(add.errors)")
        }
        let final = try await demo.json(BookPerson.self, "show", "\(ada.id)", "--json")
        #expect(final.name == "Ada 3")
        #expect(final.addresses.map(\.street) == ["Street 1", "Street 2", "Street 3"])
    }

    @Test("without DATABASE_URL (an empty one is none): starts its own server, shares it with the next process, stops and resets it")
    func embeddedServer() async throws {
        let directory = FileManager.default.temporaryDirectory.path + "/demo-\(UInt32.random(in: 0...UInt32.max))"
        let local = DemoProcess(environment: ["DEMO_DATA_DIRECTORY": directory, "DATABASE_URL": ""])
        defer {
            local.cleanUp("db", "reset")
            try? FileManager.default.removeItem(atPath: directory)
            try? FileManager.default.removeItem(atPath: directory + ".lock")
        }
        #expect(try await local.run("db", "status").output.contains("not running"))
        let ada = try await local.json(BookPerson.self, "add", "Ada", "--json")
        #expect(try await local.json([BookPerson].self, "list", "--json") == [ada])  // another process, same server

        struct Status: Decodable { var running: Bool; var psql: String? }
        let status = try await local.json(Status.self, "db", "status", "--json")
        #expect(status.running && status.psql?.contains(directory) == true)
        struct Action: Decodable { var stopped: Bool?; var deleted: Bool? }
        #expect(try await local.json(Action.self, "db", "stop", "--json").stopped == true)
        #expect(try await local.json(Action.self, "db", "stop", "--json").stopped == false)  // not running any more
        #expect(try await local.json(Status.self, "db", "status", "--json").running == false)
        #expect(try await local.json([BookPerson].self, "list", "--json") == [ada])  // restarted; the data stayed
        #expect(try await local.json(Action.self, "db", "reset", "--json").deleted == true)
        #expect(!FileManager.default.fileExists(atPath: directory))
    }

    @Test("DEMO_DATA_DIRECTORY naming a directory of other files: refused in one line; db reset deletes none of them")
    func foreignDataDirectory() async throws {
        let directory = FileManager.default.temporaryDirectory.path + "/demo-project-\(UInt32.random(in: 0...UInt32.max))"
        defer {
            try? FileManager.default.removeItem(atPath: directory)
            try? FileManager.default.removeItem(atPath: directory + ".lock")
        }
        try FileManager.default.createDirectory(atPath: directory + "/src", withIntermediateDirectories: true)
        try "notes".write(toFile: directory + "/README", atomically: true, encoding: .utf8)
        let local = DemoProcess(environment: ["DEMO_DATA_DIRECTORY": directory, "DATABASE_URL": ""])
        let list = try await local.run("list")
        #expect(list.status != 0 && list.errors.contains("already holds files a local server did not make (README, src)"), "\(list.errors)")
        #expect(list.errors.split(separator: "\n").count == 1)
        let reset = try await local.run("db", "reset")
        #expect(reset.status == 0, "\(reset.errors)")
        // Not "the next demo command starts one": it refuses the directory (a stranger's run).
        #expect(reset.output.contains("It holds other files, so no demo command starts one there") && !reset.output.contains("The next demo command"),
                "\(reset.output)")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: directory)) == ["README", "src"])
    }

    @Test("two demos started at once on a fresh machine share one new server")
    func simultaneousFirstStart() async throws {
        let directory = FileManager.default.temporaryDirectory.path + "/demo-\(UInt32.random(in: 0...UInt32.max))"
        let local = DemoProcess(environment: ["DEMO_DATA_DIRECTORY": directory])
        defer {
            local.cleanUp("db", "reset")
            try? FileManager.default.removeItem(atPath: directory + ".lock")
        }
        async let first = Task.detached { try await local.run("add", "Ada") }.value
        async let second = Task.detached { try await local.run("add", "Grace") }.value
        let runs = try await [first, second]
        #expect(runs.map(\.status) == [0, 0], "\(runs.map(\.errors))")
        #expect(try await local.json([BookPerson].self, "list", "--json").map(\.name) == ["Ada", "Grace"])
    }
}
