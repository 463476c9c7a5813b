import Foundation
@testable import Repository
import Testing

/// A password given in any of the shapes users give them never appears in what the library, the
/// demo or migrate print — nor does any piece of it that a parser might quote.
@Suite("Secrets never printed")
struct SecretLeakTests {
    /// Connection strings, each with a distinctive password (pieces: S3kr1t, Pwx9, …).
    static let shapes: [String] = [
        "postgres://app:S3kr1tPwx9@127.0.0.1:1/db",
        "postgres://app:S3kr1t%2FPwx9@127.0.0.1:1/db",
        "postgres://app:S3kr%31tPwx9@127.0.0.1:1/db",
        "postgres://app:S3kr1t/Pwx9@127.0.0.1:1/db",
        "postgres://app:S3kr1t@Pwx9@127.0.0.1:1/db",
        "postgres://app:S3kr1t:Pwx9@127.0.0.1:1/db",
        "postgres://app:S3kr1t%Pwx9@127.0.0.1:1/db",
        "postgres://app:S3kr1t%zzPwx9@127.0.0.1:1/db",
        "postgres://app:S3kr1tPwx9@127.0.0.1:notaport/db",
        "postgres://app:S3kr1tPwx9@[::1/db",
        "postgres://app:Pwx9/yz@host:5432/db",
        "postgres://app:Pwx9@x:y/S3kr1t%Q9@127.0.0.1/db",
        "postgres://127.0.0.1:1/db?password=S3kr1tPwx9",
        "postgres://127.0.0.1:1/db?password=S3kr1t%zzPwx9",
        "postgres://127.0.0.1:1/db?user=app&password=S3kr1tPwx9&sslmode=bogus",
        "postgres://app:S3kr1tPwx9@127.0.0.1:1/db?sslmode=bogus",
        "postgresql://app:S3kr1tPwx9@/db?host=/nonexistent",
        "postgres://app:S3kr1tPwx9@127.0.0.1:99999/db",
        "host=127.0.0.1 port=1 user=app password=S3kr1tPwx9 dbname=db",
        "host=127.0.0.1 port=1 password='S3kr1t Pwx9' dbname=db",
        "host=127.0.0.1 port=notaport password=S3kr1tPwx9",
        "host=127.0.0.1 password='S3kr1tPwx9",
        "password=S3kr1tPwx9 bogus_option=1",
        "host=127.0.0.1 port=1 password = S3kr1tPwx9 dbname=db",
        // A space in an unquoted value: libpq quotes what follows it, as a word or as a keyword (a stranger's run).
        "host=127.0.0.1 port=1 user=app password=S3kr1t Pwx9 dbname=db",
        "host=127.0.0.1 port=1 password=S3kr1t Pwx9=1",
        // Raw passwords holding ? # % and @, which libpq's URL parser quotes a piece of (a stranger's run).
        "postgres://app:?#%S3kr1tPwx9@127.0.0.1:1/db",
        "postgres://app:Pwx9@:/?#S3kr1t&= x@127.0.0.1:1/db",
        "postgres://app:Pwx9@S3kr1t?c#%&@127.0.0.1:1/db",
        // No scheme, or a malformed one: libpq reads a conninfo string, and quotes it whole in its complaint (a stranger's run).
        "app:S3kr1tPwx9@127.0.0.1:1/db",
        "//app:S3kr1tPwx9@127.0.0.1:1/db",
        "postgres:/app:S3kr1tPwx9@127.0.0.1:1/db",
        "postgres//app:S3kr1t/Pwx9@127.0.0.1:1/db",
        // The `@host` left out: libpq reads the password as a port, and quotes it (a stranger's run).
        "postgres://app:S3kr1tPwx9",
        "postgres://app:S3kr1tPwx9/db",
    ]

    /// The pieces no output may hold.
    static let pieces = ["S3kr1t", "Pwx9", "S3kr1tPwx9"]

    static func leaks(in text: String) -> [String] {
        pieces.filter { text.contains($0) }
    }

    static func run(_ program: String, _ arguments: [String], environment: [String: String]) async throws -> String {
        let bin = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        var inherited = ProcessInfo.processInfo.environment.filter { $0.key != "DATABASE_URL" && $0.key != "PGPASSWORD" }
        inherited["DEMO_DATA_DIRECTORY"] = "/nonexistent/never-started"
        let child = try ChildProcess(bin.appendingPathComponent(program).path, arguments, environment: inherited.merging(environment) { $1 })
        return await child.completion().text
    }

    @Test("33 connection strings through Database: errors, descriptions and dumps hold no piece of the password",
          arguments: shapes)
    func database(shape: String) async throws {
        var seen = ""
        do {
            let configuration = shape.contains("://") ? try ConnectionConfiguration(url: shape) : try ConnectionConfiguration(conninfo: shape)
            seen += "\(configuration) \(String(reflecting: configuration))"
            dump(configuration, to: &seen)
            let database = Database(configuration, maximumConnections: 1)
            defer { database.close() }
            _ = try await database.query("SELECT 1")
        } catch {
            seen += "\(error) \(String(reflecting: error))"
            dump(error, to: &seen)
        }
        #expect(Self.leaks(in: seen).isEmpty, "\(shape): \(seen)")
    }

    @Test("the same shapes through demo (DATABASE_URL: list, db url, db status) and migrate (--database-url, and a misplaced argument)", arguments: shapes)
    func programs(shape: String) async throws {
        let outputs = [
            try await Self.run("demo", ["list"], environment: ["DATABASE_URL": shape]),
            try await Self.run("demo", ["list", "--json"], environment: ["DATABASE_URL": shape]),
            try await Self.run("demo", ["db", "url"], environment: ["DATABASE_URL": shape]),
            try await Self.run("demo", ["db", "status", "--json"], environment: ["DATABASE_URL": shape]),
            try await Self.run("migrate", ["status", "--database-url", shape], environment: [:]),
            try await Self.run("migrate", ["baseline", "--", "1", "--database-url", shape], environment: [:]),
        ]
        for output in outputs {
            #expect(Self.leaks(in: output).isEmpty, "\(shape): \(output)")
        }
    }

    @Test("a connection string given to migrate new as the migration's name is refused: no file is made, and its password is not shown in any case", arguments: shapes)
    func connectionStringAsName(shape: String) async throws {
        let directory = try MigrationDirectory()
        defer { directory.remove() }
        let output = try await Self.run("migrate", ["new", shape, "--dir", directory.path], environment: [:])
        #expect(output.contains("the name looks like a connection string"), "\(shape): \(output)")
        #expect(Self.pieces.allSatisfy { !output.lowercased().contains($0.lowercased()) }, "\(shape): \(output)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test("a URL without @host: its non-port after the colon is redacted; hosts listed with commas, IPv6 hosts and real ports are not")
    func portOrPassword() {
        #expect(SecretRedactor(scanning: ["postgres://admin:S3kr1tPwx9"]).redact("port \"S3kr1tPwx9\"") == "port \"***\"")
        #expect(SecretRedactor(scanning: ["postgres://admin:99999999"]).redact("invalid port number: \"99999999\"") == "invalid port number: \"***\"")
        let shown = "connection to server at \"127.0.0.1\", port 5999 failed; at \"localhost\" (::1), port 5432 failed"
        for url in ["postgresql://127.0.0.1:5999,localhost/db", "postgres://h:5432,[::1]/db", "postgres://[::1]:5999/db", "postgres://localhost:5999/db"] {
            #expect(SecretRedactor(scanning: [url]).redact(shown) == shown, "\(url)")
        }
    }

    @Test("a password's pieces are removed where they stand apart, not from inside words: a wrong password's error stays readable")
    func readableRedaction() {
        var redactor = SecretRedactor()
        redactor.scan("postgres://app:S3cr3t-P@ss@host/db")
        #expect(redactor.redact("sslmode=require; server process 2722; AddressBookKit; S3cr3t-P@ss; port \"ss\"; S3cr3t-P")
                == "sslmode=require; server process 2722; AddressBookKit; ***; port \"***\"; ***")
        var words = SecretRedactor()
        words.scan("host=h password='correct horse battery staple' dbname=d")
        #expect(words.redact("password authentication failed for user \"app\"") == "password authentication failed for user \"app\"")
        #expect(words.redact("invalid value \"horse\" for option; correct horse battery staple") == "invalid value \"***\" for option; ***")
        // A short password (docker compose's `app`) stays inside words, and goes where it stands alone.
        let short = SecretRedactor(scanning: ["postgres://app:app@localhost:5432/app"])
        #expect(short.redact("its columns are id integer, applied text; database \"apps\"; postgres://app:app@localhost; password \"app\"")
                == "its columns are id integer, applied text; database \"apps\"; postgres://***:***@localhost; password \"***\"")
        // A long one goes also from inside a word.
        #expect(SecretRedactor(scanning: ["postgres://u:S3kr1tPwx9@h/d"]).redact("xS3kr1tPwx9y") == "x***y")
        // A password in a URL's query ends at `&`: the settings after it stay readable (a
        // stranger's run saw `invalid *** value: "***"`).
        let query = SecretRedactor(scanning: ["postgres://h/d?user=u&password=S3kr1tPwx9&sslmode=bogus"])
        #expect(query.redact("invalid sslmode value: \"bogus\" (S3kr1tPwx9)") == "invalid sslmode value: \"bogus\" (***)")
        // An unquoted conninfo value with a space: the password as its writer meant it goes, up
        // to the next keyword.
        let spaced = SecretRedactor(scanning: ["host=h password=S3kr1t Pwx9 dbname=d"])
        #expect(spaced.redact("missing \"=\" after \"Pwx9\"; dbname d") == "missing \"=\" after \"***\"; dbname d")
    }

    @Test("a password written in a statement (CREATE ROLE … PASSWORD) is hidden where an error shows the statement, in any quoting, also when the statement is cut short")
    func passwordInStatement() async throws {
        for (statement, hidden) in [("CREATE ROLE a LOGIN PASSWORD 'Hunter2Secret'", "Hunter2Secret"),
                                    ("alter user a with encrypted password E'It''s\\nSecret' VALID UNTIL 'infinity'", "Secret"),
                                    ("CREATE ROLE a PASSWORD U&'d\\0061taSecret'", "taSecret"),
                                    (String(repeating: "x", count: 180) + " PASSWORD '" + String(repeating: "S", count: 100) + "'", "SSSS")] {
            let line = "\(PostgresError(.server, "refused", statement: statement))"
            #expect(!line.contains(hidden) && line.contains("'***'"), "\(line)")
        }
        #expect(SQLPasswords.redacted("SELECT 'password' AS word") == "SELECT 'password' AS word")
        // Through the server: the statement a failure names.
        let database = try await TestServer.makeDatabase()
        let failure = await #expect(throws: PostgresError.self) {
            try await database.query("CREATE ROLE nobody_here LOGIN PASSWORD 'Hunter2Secret' BOGUS")
        }
        #expect(failure.map { !"\($0)".contains("Hunter2Secret") && "\($0)".contains("PASSWORD '***' BOGUS") } == true, "\(String(describing: failure))")
    }

    @Test("a password in a statement the server refuses is hidden from its message too (an unterminated quote), from a dump of the error, and in dollar quotes, after comments and in E'' with an escaped quote")
    func passwordQuotedBack() async throws {
        let database = try await TestServer.makeDatabase()
        defer { database.close() }
        for (statement, secret) in [("CREATE ROLE r1 PASSWORD 'Sup3rS3cr3t", "Sup3rS3cr3t"),
                                    (#"CREATE ROLE r1 PASSWORD E'Sup3r\'S3cr3t' BOGUS"#, "S3cr3t"),
                                    ("CREATE ROLE r1 PASSWORD $$Sup3rS3cr3t$$ BOGUS", "Sup3rS3cr3t"),
                                    ("CREATE ROLE r1 PASSWORD $x$Sup3rS3cr3t$x$ BOGUS", "Sup3rS3cr3t"),
                                    ("CREATE ROLE r1 PASSWORD /* c */ 'Sup3rS3cr3t' BOGUS", "Sup3rS3cr3t")] {
            let failure = await #expect(throws: PostgresError.self) { try await database.query(statement) }
            var dumped = ""
            dump(failure, to: &dumped)
            #expect(failure.map { !"\($0)".contains(secret) } == true, "\(String(describing: failure))")
            #expect(!dumped.contains(secret), "\(dumped)")
        }
    }

    @Test("PGPASSWORD never reaches the output either")
    func environmentPassword() async throws {
        let output = try await Self.run("migrate", ["status", "--database-url", "host=127.0.0.1 port=1 user=app"], environment: ["PGPASSWORD": "S3kr1tPwx9"])
        #expect(Self.leaks(in: output).isEmpty, "\(output)")
        var redactor = SecretRedactor(scanning: [], environment: ["PGPASSWORD": "S3kr1tPwx9"])
        redactor.scan("postgres://u:Other%20One@h/db")
        #expect(redactor.redact("S3kr1tPwx9 Other One Other%20One") == "*** *** ***")
    }
}
