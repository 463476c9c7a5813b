import CPostgres
import Foundation

/// A bare libpq connection: the baseline every case is measured against.
final class RawPostgres {
    let connection: OpaquePointer

    init(_ conninfo: String) throws {
        let pg = PQconnectdb(conninfo)
        guard let pg, PQstatus(pg) == CONNECTION_OK else {
            PQfinish(pg)
            throw BenchError("raw libpq could not connect")
        }
        connection = pg
    }

    deinit { PQfinish(connection) }

    func execute(_ sql: String) throws {
        let result = PQexec(connection, sql)
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw BenchError("\(sql): \(String(cString: PQerrorMessage(connection)))")
        }
    }

    func prepare(_ name: String, _ sql: String) throws {
        let result = PQprepare(connection, name, sql, 0, nil)
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK else { throw BenchError(String(cString: PQerrorMessage(connection))) }
    }

    /// Runs a prepared statement with text parameters and binary results; returns the row count.
    @discardableResult
    func executePrepared(_ name: String, _ parameters: [String]) -> Int {
        let copies = parameters.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let values = copies.map { UnsafePointer($0) }
        let result = PQexecPrepared(connection, name, Int32(values.count), values, nil, nil, 1)
        defer { PQclear(result) }
        return Int(PQntuples(result))
    }

    /// Waits for the next notification; returns false after `timeoutMilliseconds`.
    func waitForNotification(timeoutMilliseconds: Int32 = 5000) -> Bool {
        while true {
            PQconsumeInput(connection)
            if let notification = PQnotifies(connection) {
                PQfreemem(notification)
                return true
            }
            var descriptor = pollfd(fd: PQsocket(connection), events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, timeoutMilliseconds) == 0 { return false }
        }
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
