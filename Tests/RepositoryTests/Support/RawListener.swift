import CPostgres
import Foundation
import Repository

/// A bare libpq connection that LISTENs, to check what the server sends without the library.
final class RawListener {
    private let connection: OpaquePointer

    /// Connects to `database` on the test server and listens on `channel`.
    init(database: String, channel: String) async throws {
        let conninfo = try await TestServer.connectionString(database: database)
        let pg = PQconnectdb(conninfo)
        guard let pg, PQstatus(pg) == CONNECTION_OK else {
            PQfinish(pg)
            throw TestSetupError("raw listener could not connect")
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
