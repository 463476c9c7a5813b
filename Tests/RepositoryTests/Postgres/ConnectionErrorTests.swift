import Foundation
@testable import Repository
import Testing

@Suite("Connection errors")
struct ConnectionErrorTests {
    @Test("error kinds are values a later kind cannot break: matched in a switch with a default, compared, and named as written (metrics label failures by that name)")
    func kindsAreExtensible() {
        func retries(_ kind: PostgresError.Kind) -> Bool {
            switch kind {
            case .connectionFailed, .connectionLost: true
            default: false
            }
        }
        #expect(retries(.connectionLost) && !retries(.server) && !retries(.closed))
        #expect(PostgresError(.closed, "closed").kind == .closed && PostgresError.Kind.closed != .server)
        #expect(["\(PostgresError.Kind.connectionLost)", "\(PostgresError.Kind.invalidStatement)"] == ["connectionLost", "invalidStatement"])
        #expect("\(MigrationError.Kind.lockTimeout)" == "lockTimeout" && MigrationError.Kind.drift != .failed)
    }

    @Test("an unreachable server is a connection error naming the target, not a hang")
    func unreachable() async throws {
        let configuration = try ConnectionConfiguration(url: "postgres://ada:topsecret@127.0.0.1:1/nowhere?connect_timeout=5")
        let error = await #expect(throws: PostgresError.self) { try await Connection.connect(configuration) }
        #expect(error?.kind == .connectionFailed)
        #expect(error?.message.contains("127.0.0.1") == true)
        #expect(!(error.map { "\($0)" } ?? "").contains("topsecret"))
        // libpq's two sentences stay apart on the one line (a stranger's run read "Connection refused Is the server running").
        #expect(error?.message.contains("Connection refused; Is the server running") == true, "\(error?.message ?? "")")
    }

    @Test("a server that is down (no socket) is a connection error")
    func serverDown() async throws {
        let configuration = try ConnectionConfiguration(conninfo: "host=/nonexistent/socket/dir dbname=x")
        let error = await #expect(throws: PostgresError.self) { try await Database(configuration).query("SELECT 1") }
        #expect(error?.kind == .connectionFailed)
    }

    @Test("a setting libpq refuses (sslmode=bogus, port=abc, three ports for two hosts) is a configuration error, not tried again (helper 77 waited through retries)")
    func refusedSettings() async throws {
        for (setting, wording) in [("sslmode=bogus", #"invalid sslmode value: "bogus""#), ("port=abc", #"invalid integer value "abc" for connection option "port""#),
                                   ("host=a,b port=1,2,3", "could not match 3 port numbers to 2 hosts"),
                                   ("target_session_attrs=x", #"invalid target_session_attrs value: "x""#)] {
            let configuration = try ConnectionConfiguration(conninfo: "host=/nonexistent/socket/dir dbname=x " + setting)
            let direct = await #expect(throws: PostgresError.self) { try await Connection.connect(configuration) }
            #expect(direct?.kind == .invalidConfiguration && direct?.message.contains(wording) == true, "\(setting): \(String(describing: direct))")
            if let direct { #expect(!OpenRetry(direct).waits(othersOpen: true, deadline: .seconds(60)), "\(setting)") }
            let pool = Database(configuration)
            defer { pool.close() }
            let pooled = await #expect(throws: PostgresError.self) { try await pool.query("SELECT 1") }
            #expect(pooled?.kind == .invalidConfiguration, "\(setting)")
        }
    }

    @Test("a wrong password is refused, and the password appears nowhere in the error")
    func wrongPassword() async throws {
        let target = try await TestServer.shared.value
        let role = "r_\(UInt32.random(in: 0...UInt32.max))"
        try await TestServer.admin.value.query("SELECT 1")
        try await TestServer.admin.value.withConnection {
            try await $0.execute(script: "CREATE ROLE \(SQLIdentifier.quoted(role)) LOGIN PASSWORD 'right-password'")
        }
        let wrong = "wr0ng-Pa$$word"
        let configuration = try target.local.map {
            try ConnectionConfiguration(url: "postgres://\(role):\(wrong.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)@127.0.0.1:\($0.port)/postgres")
        } ?? target.admin.user(role, password: wrong)
        let error = await #expect(throws: PostgresError.self) { try await Connection.connect(configuration) }
        #expect(error?.kind == .connectionFailed)
        #expect(error?.sqlState == PostgresError.Code.invalidPassword)
        #expect(error?.statementDidNotRun == true)
        #expect(error?.message.contains("password authentication failed") == true)
        let text = error.map { "\($0) \(String(reflecting: $0))" } ?? ""
        #expect(!text.contains(wrong) && !text.contains("wr0ng"))
        // Through the pool: refused once, not tried again (each attempt counts against the account).
        let pool = Database(configuration)
        defer { pool.close() }
        let pooled = await #expect(throws: PostgresError.self) { try await pool.query("SELECT 1") }
        #expect(pooled?.sqlState == PostgresError.Code.invalidPassword)
        if let error {
            #expect(!OpenRetry(error).waits(othersOpen: true, deadline: .seconds(60)))
        }
    }

    @Test("cancelling a connect to a server that never answers ends it at once, not after the connect timeout (a stranger waited 9 s)")
    func cancelledConnect() async throws {
        let held = try HeldPort()  // accepts the TCP handshake, never answers
        defer { withExtendedLifetime(held) {} }
        let configuration = try ConnectionConfiguration(conninfo: "host=127.0.0.1 port=\(held.port) user=nobody dbname=nothing connect_timeout=300")
        for round in 0..<3 {
            let attempt = Task { try await Connection.connect(configuration) }
            // Cancelled once libpq has connected and waits for the server's answer (told by the
            // kernel's table of connections, within a deadline), or at once.
            if round > 0 { #expect(try await eventually(timeout: .seconds(30)) { held.connectedClients >= round }) }
            attempt.cancel()
            // A deadline far below the connect timeout: the old code waited for all of it.
            let outcome = await withTaskGroup(of: String.self) { group in
                group.addTask {
                    do { _ = try await attempt.value; return "connected" } catch is CancellationError { return "cancelled" } catch { return "\(error)" }
                }
                group.addTask { try? await Task.sleep(for: .seconds(60)); return "still waiting" }
                defer { group.cancelAll() }
                return await group.next() ?? ""
            }
            #expect(outcome == "cancelled")
        }
    }

    @Test("a failed connection's reason is told apart by its wording: a refusal that would come again is not tried again; a full or starting server, or no answer, is")
    func connectFailures() {
        let cases: [(String, String?, Bool)] = [
            (#"connection to server at "127.0.0.1", port 5432 failed: FATAL:  password authentication failed for user "a""#, "28P01", false),
            (#"connection to server on socket "/tmp/.s.PGSQL.5432" failed: FATAL:  database "nope" does not exist"#, "3D000", false),
            (#"connection to server on socket "/tmp/.s.PGSQL.5432" failed: FATAL:  role "nobody" does not exist"#, "28000", false),
            (#"connection to server at "10.0.0.1", port 5432 failed: FATAL:  no pg_hba.conf entry for host "10.0.0.2""#, "28000", false),
            ("connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  sorry, too many clients already", "53300", true),
            (#"connection to server on socket "/tmp/.s.PGSQL.5432" failed: FATAL:  the database system is starting up"#, "57P03", true),
            (#"connection to server at "127.0.0.1", port 5432 failed: Connection refused"#, nil, true),
            (#"connection to server on socket "/tmp/.s.PGSQL.5432" failed: FATAL:  the database system is not yet accepting connections"#, "57P03", true),
            // Another language's wording is not recognised: tried again, as a full server would be.
            ("connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  Passwort-Authentifizierung für Benutzer »a« fehlgeschlagen", nil, true),
        ]
        // libpq's refusal of connect_timeout comes once a host is tried (this one is found by wording alone).
        #expect(ConnectFailure.refusesSetting(#"connection to server on socket "/tmp/.s.PGSQL.5432" failed: invalid integer value "x" for connection option "connect_timeout""#))
        #expect(!cases.contains { ConnectFailure.refusesSetting($0.0) })
        for (message, sqlState, retried) in cases {
            var error = PostgresError(.connectionFailed, message)
            error.sqlState = ConnectFailure.sqlState(of: message)
            #expect(error.sqlState == sqlState, "\(message)")
            #expect(ConnectFailure.isWorthRetrying(error) == retried, "\(message)")
        }
    }

    @Test("a syntax error carries SQLSTATE 42601 and the position")
    func syntaxError() async throws {
        let database = try await TestServer.makeDatabase()
        let error = await #expect(throws: PostgresError.self) { try await database.query("SELECT 1 FROM WHERE") }
        #expect(error?.kind == .server)
        #expect(error?.sqlState == PostgresError.Code.syntaxError)
        #expect(error?.position == 15)
        #expect(error?.statement == "SELECT 1 FROM WHERE")
    }

    @Test("a unique violation carries SQLSTATE 23505, the constraint and the detail")
    func uniqueViolation() async throws {
        let database = try await TestServer.makeDatabase()
        try await database.query("CREATE TABLE people (id int PRIMARY KEY, email text CONSTRAINT people_email_key UNIQUE)")
        try await database.query("INSERT INTO people VALUES ($1, $2)", [1, "ada@example.com"])
        let error = await #expect(throws: PostgresError.self) {
            try await database.query("INSERT INTO people VALUES ($1, $2)", [2, "ada@example.com"])
        }
        #expect(error?.sqlState == PostgresError.Code.uniqueViolation)
        #expect(error?.constraint == "people_email_key")
        #expect(error?.table == "people")
        #expect(error?.detail?.contains("already exists") == true)
        let count = try await database.query("SELECT count(*) FROM people")[0].decode(Int.self, at: 0)
        #expect(count == 1)
    }
}
