import Foundation
@testable import Repository
import Testing

/// The `migrate` executable, run as a separate process against a real database.
@Suite("migrate command")
struct MigrateCommandTests {
    struct Run: Sendable {
        var status: Int32
        var output: String
    }

    let databaseURL: String
    let database: Database

    init() async throws {
        database = try await TestServer.makeDatabase()
        databaseURL = try await TestServer.connectionString(database: database.name())
    }

    func migrate(_ arguments: String...) async throws -> Run {
        try await migrate(arguments)
    }

    func migrate(_ arguments: [String]) async throws -> Run {
        try await Self.run(arguments)
    }

    /// Runs the built `migrate` with `arguments`, in `directory` and with `environment` when
    /// given; standard output and standard error together. The wait is on a thread of its own
    /// (see `ChildProcess.completion()`).
    static func run(_ arguments: [String], in directory: String? = nil, environment: [String: String]? = nil) async throws -> Run {
        try await ChildProcess.offPool { Result { try runBlocking(arguments, in: directory, environment: environment) } }.get()
    }

    private static func runBlocking(_ arguments: [String], in directory: String?, environment: [String: String]?) throws -> Run {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("migrate")
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        if let environment { process.environment = environment }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }

    @Test("the shared options may come before the command, as with git: --database-url, --dir (also with =), --lock-timeout")
    func optionsBeforeCommand() async throws {
        let directory = try MigrationDirectory()
        defer { directory.remove() }
        let created = try await migrate("--dir=\(directory.path)", "new", "create_notes")
        #expect(created.status == 0, "\(created.output)")
        let path = created.output.trimmingCharacters(in: .whitespacesAndNewlines)
        try "-- migrate:up\nCREATE TABLE notes (id int);\n".write(toFile: path, atomically: true, encoding: .utf8)
        let up = try await migrate("--database-url", databaseURL, "--dir", directory.path, "--lock-timeout", "5", "up")
        #expect(up.status == 0, "\(up.output)")
        #expect(try await database.tableExists("notes"))
        let status = try await migrate("--database-url=\(databaseURL)", "status", "--dir", directory.path, "--fail-if-pending")
        #expect(status.status == 0, "\(status.output)")
        // Given on both sides, it is refused rather than guessed.
        let twice = try await migrate("--dir", directory.path, "status", "--dir=/elsewhere", "--database-url", databaseURL)
        #expect(twice.status != 0 && twice.output.contains("--dir is given both before and after the command"), "\(twice.output)")
        // A misspelt command behind them is named as one, not the options as unknown (a stranger's run).
        let misspelt = try await migrate("--database-url", databaseURL, "statsu")
        #expect(misspelt.status != 0 && misspelt.output.contains("unknown command 'statsu'") && !misspelt.output.contains("Unknown option"), "\(misspelt.output)")
        // help shows the command after it, whatever came before it.
        let help = try await migrate("--dir", directory.path, "help", "up")
        #expect(help.status == 0 && help.output.contains("USAGE: migrate up"), "\(help.output)")
        // An option that is not shared still belongs after its command, and says so.
        let misplaced = try await migrate("--fail-if-pending", "status")
        #expect(misplaced.status != 0 && misplaced.output.contains("--fail-if-pending"))
    }

    @Test("new, up, status, down and validate from the command line")
    func lifecycle() async throws {
        let directory = try MigrationDirectory()
        defer { directory.remove() }
        let created = try await migrate("new", "create_notes", "--dir", directory.path)
        #expect(created.status == 0)
        let path = created.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(path.hasSuffix("0001_create_notes.sql"))
        try "-- migrate:up\nCREATE TABLE notes (id int);\n-- migrate:down\nDROP TABLE notes;\n".write(toFile: path, atomically: true, encoding: .utf8)

        let pending = try await migrate("status", "--fail-if-pending", "--dir", directory.path, "--database-url", databaseURL)
        #expect(pending.status == 3)
        #expect(pending.output.contains("pending"))

        let up = try await migrate("up", "--dir", directory.path, "--database-url", databaseURL)
        #expect(up.status == 0, "\(up.output)")
        #expect(up.output.contains("applied \(path) in "))
        #expect(try await database.tableExists("notes"))

        let status = try await migrate("status", "--json", "--dir", directory.path, "--database-url", databaseURL)
        // Versions are strings, every one: none rounded by a reader that takes numbers as doubles.
        struct Entry: Decodable { var version: String; var state: String }
        let entries = try JSONDecoder().decode([Entry].self, from: Data(status.output.utf8))
        #expect(entries.map(\.state) == ["applied"] && entries.map(\.version) == ["1"])

        #expect(try await migrate("validate", "--dir", directory.path, "--database-url", databaseURL).status == 0)
        #expect(try await migrate("down", "--dir", directory.path, "--database-url", databaseURL).status == 0)
        #expect(try await !database.tableExists("notes"))
    }

    @Test("a history edited by hand: applied_at infinity is shown as infinity, and a negative version is refused naming it (a stranger's run)")
    func historyEditedByHand() async throws {
        let directory = try MigrationDirectory(["0001_a.sql": "-- migrate:up\nCREATE TABLE a (id int);\n"])
        defer { directory.remove() }
        #expect(try await migrate("up", "--dir", directory.path, "--database-url", databaseURL).status == 0)
        try await database.query("UPDATE schema_migrations SET applied_at = 'infinity'")
        let text = try await migrate("status", "--dir", directory.path, "--database-url", databaseURL)
        #expect(text.status == 0 && text.output.contains("applied  infinity"), "\(text.output)")
        let json = try await migrate("status", "--json", "--dir", directory.path, "--database-url", databaseURL)
        #expect(json.output.contains(#""appliedAt" : "infinity""#), "\(json.output)")
        try await database.query("INSERT INTO schema_migrations (version, name, checksum, applied_at, execution_ms) VALUES (-3, 'neg', 'x', now(), 0)")
        let negative = try await migrate("status", "--dir", directory.path, "--database-url", databaseURL)
        #expect(negative.status != 0 && negative.output.contains("schema_migrations records -3 as a version, which is not one"), "\(negative.output)")
    }

    @Test("a failing migration exits non-zero with file, line, message and SQLSTATE")
    func failure() async throws {
        let directory = try MigrationDirectory(["0001_bad.sql": "-- migrate:up\nCREATE TABLE ok (id int);\nCREATE TABLE bad (id int,);\n"])
        defer { directory.remove() }
        let run = try await migrate("up", "--dir", directory.path, "--database-url", databaseURL)
        #expect(run.status != 0)
        #expect(run.output.contains("0001_bad.sql:3: syntax error"))
        #expect(run.output.contains("SQLSTATE 42601"))
    }

    @Test("--help documents every command")
    func help() async throws {
        let help = try await migrate("--help").output
        for command in ["up", "down", "status", "validate", "new", "baseline", "repair", "create", "wait"] {
            #expect(help.contains("  \(command) "), "missing \(command)")
        }
    }

    @Test("--version; options only where they apply; value names in help; errors are one line prefixed migrate:")
    func shape() async throws {
        let version = try await migrate("--version")
        #expect(version.status == 0 && version.output.split(separator: "\n").count == 1)
        let misplaced = try await migrate("status", "--lock-timeout", "5", "--database-url", databaseURL)
        #expect(misplaced.status != 0 && misplaced.output.hasPrefix("migrate: ") && misplaced.output.split(separator: "\n").count == 1, "\(misplaced.output)")
        #expect(try await migrate("validate", "--allow-out-of-order", "--dir", "/nonexistent", "--database-url", databaseURL).output.contains("/nonexistent"))
        #expect(try await migrate("status", "--allow-out-of-order", "--database-url", databaseURL).status != 0)
        let upHelp = try await migrate("up", "--help").output
        #expect(upHelp.contains("--to <version>") && upHelp.contains("--lock-timeout <seconds>") && upHelp.contains("--history-table <table>"), "\(upHelp)")
        #expect(try await migrate("down", "--help").output.contains("--to <version>"))
    }

    @Test("down --to, repair --version and --history-table")
    func downToRepairAndHistoryTable() async throws {
        let directory = try MigrationDirectory([
            "0001_a.sql": "-- migrate:up\nCREATE TABLE a (id int);\n-- migrate:down\nDROP TABLE a;\n",
            "0002_b.sql": "-- migrate:up\nCREATE TABLE b (id int);\n-- migrate:down\nDROP TABLE b;\n",
            "0003_c.sql": "-- migrate:up\nCREATE TABLE c (id int);\n-- migrate:down\nDROP TABLE c;\n",
        ])
        defer { directory.remove() }
        let common = ["--dir", directory.path, "--database-url", databaseURL, "--history-table", "ops.applied"]
        try await database.query("CREATE SCHEMA ops")
        #expect(try await migrate(["up"] + common).status == 0)
        #expect(try await database.count("SELECT count(*) FROM ops.applied") == 3)
        #expect(try await !database.tableExists("schema_migrations"))

        let down = try await migrate(["down", "--to", "1"] + common)
        #expect(down.status == 0, "\(down.output)")
        let (a, b, c) = (try await database.tableExists("a"), try await database.tableExists("b"), try await database.tableExists("c"))
        #expect(a && !b && !c)

        // A deliberate edit of an applied migration: validate refuses it, repair accepts it.
        try directory.write("0001_a.sql", "-- migrate:up\nCREATE TABLE a (id int); -- reviewed\n-- migrate:down\nDROP TABLE a;\n")
        #expect(try await migrate(["validate"] + common).status != 0)
        let repair = try await migrate(["repair", "--version", "1"] + common)
        #expect(repair.status == 0 && repair.output.contains("checksum") && repair.output.contains("->"), "\(repair.output)")
        #expect(try await migrate(["validate"] + common).status == 0)
        #expect(try await migrate(["repair", "--version", "2"] + common).output.contains("not applied"))
    }

    @Test("create makes the database the URL names (once), showing a name with control characters escaped; wait returns once the server accepts connections")
    func createAndWait() async throws {
        let name = "created_\(UInt32.random(in: 0...UInt32.max))"
        let url = try await TestServer.connectionString(database: name)
        let first = try await migrate("create", "--database-url", url)
        #expect(first.status == 0 && first.output.contains("Created database \(name)"), "\(first.output)")
        #expect(try await migrate("create", "--database-url", url).output.contains("already exists"))
        // Replicas starting together: each run creates it or finds it created, none fails.
        let raced = "raced_\(UInt32.random(in: 0...UInt32.max))"
        let racedURL = try await TestServer.connectionString(database: raced)
        let runs = try await withThrowingTaskGroup(of: Run.self) { group in
            for _ in 0..<4 { group.addTask { try await Self.run(["create", "--database-url", racedURL]) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(runs.allSatisfy { $0.status == 0 } && runs.filter { $0.output.contains("Created database") }.count == 1, "\(runs.map(\.output))")
        try await TestServer.admin.value.query("DROP DATABASE \(SQLIdentifier.quoted(raced))")
        #expect(try await migrate("wait", "--database-url", url, "--timeout", "10").status == 0)
        #expect(try await migrate("wait", "--database-url", url, "--timeout", "0").status == 0, "--timeout 0 checks once")
        // Negative numbers are the options' values, refused as such (not "Missing value").
        for (arguments, expected) in [(["wait", "--timeout", "-1"], "--timeout is the seconds to wait, 0 or more, not -1"),
                                      (["up", "--lock-timeout", "-1"], "--lock-timeout is the seconds to wait for another run's lock, 0 or more, not -1"),
                                      (["down", "--steps", "-3"], "--steps counts the migrations to roll back, 1 or more, not -3")] {
            let run = try await migrate(arguments + ["--database-url", url])
            #expect(run.status != 0 && run.output.contains(expected), "\(arguments): \(run.output)")
        }
        let nowhere = try await migrate("wait", "--database-url", "postgres://nobody@127.0.0.1:1/none", "--timeout", "1")
        #expect(nowhere.status != 0 && nowhere.output.contains("did not accept connections within 1 s"), "\(nowhere.output)")
        // A server that refuses the role is up, but not ready for this user: reported, not passed.
        let ghost = "ghost_role_\(UInt32.random(in: 0...UInt32.max))"
        var asGhost = URLComponents(string: url)
        asGhost?.user = ghost
        asGhost?.password = nil
        // A URL with a host names the role in its user-info; a conninfo string (a local socket) takes its last user=.
        let ghostURL = url.contains("://") ? try #require(asGhost?.string) : url + " user=\(ghost)"
        let refused = try await migrate("wait", "--database-url", ghostURL, "--timeout", "4")
        #expect(refused.status != 0 && refused.output.contains("does not exist") && refused.output.contains(ghost), "\(refused.output)")
        try await TestServer.admin.value.query("DROP DATABASE \(SQLIdentifier.quoted(name))")
        // A name holding control characters is shown escaped (dropped after: one DROP DATABASE at a time here).
        let hostile = "created_\u{1B}[2J_\(UInt32.random(in: 0...UInt32.max))"
        let hostileURL = try await TestServer.connectionString(database: hostile)
        for _ in 0..<2 {  // created, then already there
            let run = try await migrate("create", "--database-url", hostileURL)
            #expect(run.status == 0 && !run.output.contains("\u{1B}") && run.output.contains("created_\\u{1b}[2J_"), "\(run.output.debugDescription)")
        }
        try await TestServer.admin.value.query("DROP DATABASE \(SQLIdentifier.quoted(hostile))")
    }

    @Test("with no URL, libpq's PG variables name the database, not the demo's")
    func libpqEnvironment() async throws {
        let directory = try MigrationDirectory(["0001_notes.sql": "-- migrate:up\nCREATE TABLE notes (id int);\n-- migrate:down\nDROP TABLE notes;\n"])
        defer { directory.remove() }
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PG") && $0.key != "DATABASE_URL" }
        environment["DEMO_DATA_DIRECTORY"] = "/nonexistent/demo-must-not-start"
        environment.merge(Self.libpqVariables(for: databaseURL)) { $1 }
        let up = try await Self.run(["up", "--dir", directory.path], environment: environment)
        #expect(up.status == 0, "\(up.output)")
        #expect(up.output.contains("using libpq's environment (PGHOST is set)") && !up.output.contains("demo"), "\(up.output)")
        #expect(try await database.tableExists("notes"))
    }

    /// `PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD` and `PGDATABASE` for a URL or a conninfo string.
    static func libpqVariables(for connection: String) -> [String: String] {
        let names = ["host": "PGHOST", "port": "PGPORT", "user": "PGUSER", "password": "PGPASSWORD", "dbname": "PGDATABASE"]
        guard connection.contains("://"), let url = URLComponents(string: connection) else {
            let pairs = connection.split(separator: " ").compactMap { pair -> (String, String)? in
                let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                return parts.count == 2 ? names[parts[0]].map { ($0, parts[1]) } : nil
            }
            return Dictionary(pairs) { $1 }
        }
        let values: [String: String?] = ["PGHOST": url.host, "PGPORT": url.port.map(String.init), "PGUSER": url.user,
                                         "PGPASSWORD": url.password, "PGDATABASE": String(url.path.dropFirst())]
        return values.compactMapValues { $0 }
    }
}
