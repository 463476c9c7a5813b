import CPostgres
import Foundation
import Repository

/// A bare libpq connection that LISTENs, to check what the server sends without the library.
final class RawListener {
    private let connection: OpaquePointer

    /// Connects to `database` on the test server and listens on `channel`.
    init(database: String, channel: String) async throws {
        let target = try await TestServer.shared.value
        let base = ProcessInfo.processInfo.environment["DATABASE_URL"]
            ?? target.local.map { "host=\($0.socketDirectory) port=\($0.port) user=\($0.superuser)" } ?? ""
        // dbname twice: the first is expanded as a URL or conninfo, the second overrides its database.
        let pg = "dbname".withCString { key in
            base.withCString { first in
                database.withCString { second in
                    PQconnectdbParams([key, key, nil], [first, second, nil], 1)
                }
            }
        }
        guard let pg, PQstatus(pg) == CONNECTION_OK else {
            throw PostgresError(.connectionFailed, "raw listener could not connect")
        }
        connection = pg
        PQclear(PQexec(pg, "LISTEN \(channel)"))
    }

    deinit { PQfinish(connection) }

    /// The next notification's payload, or nil after `timeout`.
    func next(timeout: Duration = .seconds(10)) -> String? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            PQconsumeInput(connection)
            if let notification = PQnotifies(connection) {
                defer { PQfreemem(notification) }
                return String(cString: notification.pointee.extra)
            }
            var descriptor = pollfd(fd: PQsocket(connection), events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, 50)
        }
        return nil
    }
}
