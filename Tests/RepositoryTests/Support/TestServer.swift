import Foundation
import Repository

/// The PostgreSQL server the tests use: `DATABASE_URL` when set, else one throwaway local
/// server per test process (with TCP, for password tests), started on first use.
enum TestServer {
    struct Target: Sendable {
        let admin: ConnectionConfiguration
        let local: LocalServer?
    }

    static let shared = Task<Target, any Error> {
        if ProcessInfo.processInfo.environment["DATABASE_URL"] != nil {
            return Target(admin: try .environment(), local: nil)
        }
        let server = try await LocalServer.start(.throwaway, tcpPort: 0)
        return Target(admin: server.configuration, local: server)
    }

    /// A second server for the tests that follow changes by logical replication: making a
    /// replication slot waits for every transaction running on the server to end, and other
    /// suites hold some open for long (on purpose). Its databases' names start with `repl_`.
    static let streaming = Task<Target, any Error> {
        if ProcessInfo.processInfo.environment["DATABASE_URL"] != nil { return try await shared.value }
        let server = try await LocalServer.start(.throwaway)
        return Target(admin: server.configuration, local: server)
    }

    static let admin = Task<Database, any Error> {
        Database(try await shared.value.admin, maximumConnections: 2)
    }

    static let streamingAdmin = Task<Database, any Error> {
        Database(try await streaming.value.admin, maximumConnections: 2)
    }

    /// A new, empty database for one suite, so suites can run in parallel; on the
    /// ``streaming`` server with `replication`.
    /// `options` follow `CREATE DATABASE name` (`ENCODING 'SQL_ASCII' TEMPLATE template0`).
    static func makeDatabase(_ label: String = #fileID, maximumConnections: Int = 8, replication: Bool = false, options: String = "") async throws -> Database {
        Database(try await makeDatabaseConfiguration(label, replication: replication, options: options), maximumConnections: maximumConnections)
    }

    static func makeDatabaseConfiguration(_ label: String = #fileID, replication: Bool = false, options: String = "") async throws -> ConnectionConfiguration {
        let slug = label.lowercased().filter { $0.isLetter || $0.isNumber }.suffix(30)
        let name = "\(replication ? "repl" : "test")_\(slug)_\(UInt32.random(in: 0...UInt32.max))"
        try await (replication ? streamingAdmin : admin).value.withConnection { try await $0.execute(script: "CREATE DATABASE \(SQLIdentifier.quoted(name)) \(options)") }
        return try await (replication ? streaming : shared).value.admin.database(name)
    }
}

extension TestServer {
    /// A libpq connection string for `database` on the test server, for other programs (psql,
    /// the migrate binary) and bare libpq connections.
    static func connectionString(database: String) async throws -> String {
        if let url = ProcessInfo.processInfo.environment["DATABASE_URL"] {
            guard url.contains("://"), var components = URLComponents(string: url) else { return "\(url) dbname=\(database)" }
            components.path = "/" + database
            return components.string ?? url
        }
        guard let server = try await (database.hasPrefix("repl_") ? streaming : shared).value.local else {
            throw TestSetupError("no DATABASE_URL and no local server")
        }
        return "host=\(server.socketDirectory) port=\(server.port) user=\(server.superuser) dbname=\(database)"
    }
}

/// The test environment is not what a test needs.
struct TestSetupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension Database {
    /// The name of the database this pool connects to.
    func name() async throws -> String {
        try await query("SELECT current_database()")[0].decode(String.self, at: 0)
    }
}

/// Waits until `condition` holds, polling, or fails after `timeout`.
func eventually(timeout: Duration = .seconds(30), _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(20))
    }
    return try await condition()
}

extension LocalServer {
    /// Runs `body` with a throwaway server of its own, then stops the server — also when `body`
    /// throws — and waits for the stop. A stop left running in a task of its own may still be
    /// starting `pg_ctl` when the test process exits: swift-subprocess then drops the spawn it
    /// had queued, and the runtime reports a continuation leaked by `runOnBackgroundThread(_:)`.
    static func withThrowaway<T>(tcpPort: Int? = nil, tcpAddress: String = "127.0.0.1",
                                 _ body: (LocalServer) async throws -> T) async throws -> T {
        let server = try await LocalServer.start(.throwaway, tcpPort: tcpPort, tcpAddress: tcpAddress)
        let result: T
        do {
            result = try await body(server)
        } catch {
            try? await server.stop()
            throw error
        }
        try await server.stop()
        return result
    }
}
