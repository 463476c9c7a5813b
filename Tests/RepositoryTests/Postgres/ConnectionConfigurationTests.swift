import Foundation
@testable import Repository
import Testing

@Suite("Connection configuration")
struct ConnectionConfigurationTests {
    @Test("a URL is described without its password, everywhere")
    func redactsPassword() throws {
        let configuration = try ConnectionConfiguration(url: "postgres://ada:s3cr%3At@db.example:6543/books?sslmode=disable")
        #expect(configuration.description == "postgres://ada@db.example:6543/books")
        var dumped = ""
        dump(configuration, to: &dumped)
        for text in [configuration.description, String(reflecting: configuration), "\(configuration)", dumped] {
            #expect(!text.contains("s3cr"), "password leaked in: \(text)")
        }
    }

    @Test("the connect timeout in effect: the connection string's connect_timeout (2 at the least, as libpq counts it), else the property")
    func connectTimeoutInEffect() throws {
        var configuration = try ConnectionConfiguration(url: "postgres://ada@db.example/books?connect_timeout=3")
        configuration.connectTimeout = 30
        #expect(configuration.connectTimeoutInEffect == 3)
        #expect(try ConnectionConfiguration(conninfo: "host=/tmp connect_timeout=1").connectTimeoutInEffect == 2)
        var unbounded = try ConnectionConfiguration(conninfo: "host=/tmp connect_timeout=0")
        unbounded.connectTimeout = 7
        #expect(unbounded.connectTimeoutInEffect == 7, "libpq's 'wait forever' does not make the pool wait forever")
        var plain = try ConnectionConfiguration(conninfo: "host=/tmp dbname=app")
        plain.connectTimeout = 4
        #expect(plain.connectTimeoutInEffect == 4)
        #expect(plain.user("other").connectTimeoutInEffect == 4)
    }

    @Test("a statement timeout under a millisecond is one, not PostgreSQL's 0 (no limit); zero or less is no limit; the server holds what was set")
    func statementTimeoutRounding() async throws {
        #expect(ConnectionConfiguration.limitMilliseconds(.microseconds(500)) == 1)
        #expect(ConnectionConfiguration.limitMilliseconds(.microseconds(1_500)) == 2)
        #expect(ConnectionConfiguration.limitMilliseconds(.seconds(3)) == 3_000)
        #expect(ConnectionConfiguration.limitMilliseconds(.zero) == 0 && ConnectionConfiguration.limitMilliseconds(.seconds(-1)) == 0)
        var configuration = try await TestServer.makeDatabaseConfiguration()
        configuration.statementTimeout = .microseconds(500)
        let database = Database(configuration)
        defer { database.close() }
        #expect(try await database.query("SHOW statement_timeout")[0].decode(String.self, at: 0) == "1ms")
    }

    @Test("a unix socket directory is a host query item")
    func unixSocket() throws {
        let configuration = try ConnectionConfiguration(url: "postgresql:///app?host=/var/run/postgresql&user=me")
        #expect(configuration.description == "postgres://me@/var/run/postgresql/app")
    }

    @Test("DATABASE_URL is a URL when :// comes before any =, else a conninfo string, which may hold :// in a value (a stranger's was refused as a URL)")
    func urlOrConninfo() throws {
        let conninfo = try ConnectionConfiguration.environment(["DATABASE_URL": "host=/tmp dbname=app application_name=x://y"])
        #expect(conninfo.description.contains("app"), "\(conninfo)")
        let url = try ConnectionConfiguration.environment(["DATABASE_URL": "postgres://me@localhost/app?sslmode=disable"])
        #expect(url.description.hasPrefix("postgres://me@localhost/app"), "\(url)")
        let other = #expect(throws: PostgresError.self) { try ConnectionConfiguration.environment(["DATABASE_URL": "mysql://x/y"]) }
        #expect(other?.message.contains("must start with postgres://") == true)
    }

    @Test("a malformed URL is rejected without echoing the password")
    func malformedURL() throws {
        let error = #expect(throws: PostgresError.self) {
            try ConnectionConfiguration(url: "postgres://ada:hunter2@host/db?sslmode=%zz")
        }
        #expect(error?.kind == .invalidConfiguration)
        #expect(!(error.map { "\($0)" } ?? "").contains("hunter2"))
        #expect(throws: PostgresError.self) { try ConnectionConfiguration(url: "mysql://x") }
    }

    @Test("an unknown URL parameter is named, unless the password holds its name")
    func unknownParameter() throws {
        let named = #expect(throws: PostgresError.self) { try ConnectionConfiguration(url: "postgres://ada:hunter2@host/db?sslmod=require") }
        #expect((named.map { "\($0)" } ?? "").contains(#"libpq knows no parameter "sslmod""#), "\(String(describing: named))")
        #expect(!(named.map { "\($0)" } ?? "").contains("hunter2"))
        let hidden = #expect(throws: PostgresError.self) { try ConnectionConfiguration(url: "postgres://ada:xsslmodx@host/db?sslmod=require") }
        #expect(!(hidden.map { "\($0)" } ?? "").contains("sslmod"), "the password holds the name: not shown")
    }

    @Test("conninfo strings with quoted passwords are redacted too")
    func conninfo() throws {
        let configuration = try ConnectionConfiguration(conninfo: "host=localhost port=5433 user=bob password='it\\'s secret' dbname=x")
        #expect(configuration.description == "postgres://bob@localhost:5433/x")
        #expect(!String(reflecting: configuration).contains("secret"))
    }

    @Test("the environment: DATABASE_URL first, else libpq's PG variables")
    func environment() throws {
        let fromURL = try ConnectionConfiguration.environment(["DATABASE_URL": "postgres://u@h:1/d"])
        #expect(fromURL.description == "postgres://u@h:1/d")
        // An IPv6 host keeps its brackets, as a URL needs them (a stranger's run: `u@::1:5432`).
        #expect(try ConnectionConfiguration(url: "postgres://u@[::1]:5432/d").description == "postgres://u@[::1]:5432/d")
        #expect(try ConnectionConfiguration(conninfo: "host=::1 port=5432 user=u dbname=d").description == "postgres://u@[::1]:5432/d")
        let fromConninfo = try ConnectionConfiguration.environment(["DATABASE_URL": "host=/tmp dbname=z"])
        #expect(fromConninfo.description.hasSuffix("/tmp/z"))
        #expect(throws: Never.self) { try ConnectionConfiguration.environment([:]) }
        // libpq's variables as the dictionary holds them, not as the process's environment does.
        let fromVariables = try ConnectionConfiguration.environment(["PGHOST": "/srv/sockets", "PGPORT": "5999", "PGUSER": "app",
                                                                     "PGDATABASE": "books", "PGPASSWORD": "s3cret-pw"])
        #expect(fromVariables.description == "postgres://app@/srv/sockets:5999/books")
        let parameters = fromVariables.connectParameters()
        #expect(parameters.last { $0.key == "password" }?.value == "s3cret-pw")
        #expect(fromVariables.redact("it was s3cret-pw") == "it was ***")
        #expect(try ConnectionConfiguration.environment(["DATABASE_URL": "", "PGDATABASE": "books"]).databaseName == "books")
    }

    @Test("overrides change database and user in the description")
    func overrides() throws {
        let base = try ConnectionConfiguration(url: "postgres://u:pw@h:1/d")
        #expect(base.database("other").description == "postgres://u@h:1/other")
        #expect(base.user("v", password: "pw2").description == "postgres://v@h:1/d")
    }

    @Test("identifiers are quoted, embedded quotes doubled")
    func identifiers() {
        #expect(SQLIdentifier.quoted("people") == "\"people\"")
        #expect(SQLIdentifier.quoted("we\"ird; DROP") == "\"we\"\"ird; DROP\"")
        #expect(SQLIdentifier.quoted(qualified: "public.people") == "\"public\".\"people\"")
    }
}
