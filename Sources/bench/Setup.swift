import Foundation
import Repository

struct BenchRow: Record, Equatable {
    static let tableName = "bench_rows"
    var id: Int64
    var name: String
    var n: Int64
}

/// The database every case runs against, with raw and library access to the same server.
struct BenchEnvironment {
    let database: Database
    let conninfo: String
    let server: LocalServer?
    let rows: Int

    /// A throwaway local server unless DATABASE_URL is set; a `bench_rows` table of `rows` rows
    /// with change notifications installed.
    static func make(rows: Int) async throws -> BenchEnvironment {
        let server: LocalServer?
        let conninfo: String
        let configuration: ConnectionConfiguration
        if let url = ProcessInfo.processInfo.environment["DATABASE_URL"] {
            server = nil
            conninfo = url
            configuration = try .environment()
        } else {
            let local = try await LocalServer.start(.throwaway)
            server = local
            conninfo = "host=\(local.socketDirectory) port=\(local.port) user=\(local.superuser) dbname=postgres"
            configuration = local.configuration
        }
        let database = Database(configuration)
        // The library's live schema: the announcement triggers users get.
        try await LiveSchema.install(on: database)
        try await database.withConnection { connection in
            try await connection.execute(script: """
                DROP TABLE IF EXISTS bench_rows;
                CREATE TABLE bench_rows (id bigint PRIMARY KEY, name text NOT NULL, n bigint NOT NULL);
                INSERT INTO bench_rows (id, name, n) SELECT i, 'row ' || i, 0 FROM generate_series(1, \(rows)) AS i;
                SELECT live.enable_change_notifications('bench_rows');
                """)
            try await connection.execute(script: "VACUUM ANALYZE bench_rows")
        }
        return BenchEnvironment(database: database, conninfo: conninfo, server: server, rows: rows)
    }

    func tearDown() async throws {
        database.close()
        try await server?.stop()
    }
}

/// Resumes whoever waits for the next observed update.
final class UpdateSignal: Sendable {
    private let waiter = LockedBox<CheckedContinuation<Void, Never>?>(nil)

    /// Registers the waiter, then runs `trigger`, then waits for ``fire()``.
    func wait(after trigger: () throws -> Void) async throws {
        var failure: (any Error)?
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            waiter.set(continuation)
            do { try trigger() } catch {
                failure = error
                waiter.take()?.resume()
            }
        }
        if let failure { throw failure }
    }

    func fire() { waiter.take()?.resume() }
}

/// A value behind a lock, for the benchmark's own bookkeeping.
final class LockedBox<Value>: @unchecked Sendable {  // `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func set(_ newValue: Value) { lock.lock(); value = newValue; lock.unlock() }
    func take<T>() -> T? where Value == T? { lock.lock(); defer { value = nil; lock.unlock() }; return value }
    func update<R>(_ body: (inout Value) -> R) -> R { lock.lock(); defer { lock.unlock() }; return body(&value) }
}
