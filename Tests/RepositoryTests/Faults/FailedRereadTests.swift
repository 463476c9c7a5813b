import Foundation
@testable import Repository
import Testing

/// A re-read that fails is not the end of it: everything live is read again after a delay, so
/// handles and queries converge once reads work again, with no further change to the rows.
@Suite("Failed re-reads")
struct FailedRereadTests {
    @Test("a re-read refused for a while (SELECT revoked): once it is granted again, a handle and a live query converge with no further change")
    func refusedForAWhile() async throws {
        let database = try await makeContactsDatabase()
        let role = "reader_\(UInt32.random(in: 0...UInt32.max))"
        try await TestServer.admin.value.query("CREATE ROLE \(role) LOGIN PASSWORD 'role-pw'")
        try await database.query("GRANT SELECT, UPDATE ON contacts TO \(role)")
        let limited = Database(database.configuration.user(role, password: "role-pw"))
        defer { limited.close() }
        // One repository re-reads the handle's row itself; the other through its live query's router.
        let records = LiveRepository(limited), queries = LiveRepository(limited)
        defer { records.close(); queries.close() }
        let (recordErrors, queryErrors) = (ErrorLog(records), ErrorLog(queries))
        let ada = try await records.read(Contact.self, id: 1)
        let everyone = try await queries.readAll(Contact.self, orderBy: [.ascending(\.id)])

        try await database.query("REVOKE SELECT ON contacts FROM \(role)")
        try await database.query("UPDATE contacts SET name = 'Ada K.' WHERE id = 1")
        // Two failures of the handle's row: the feed's own read and the pool's second try, which
        // is all that followed before repairs.
        for (log, failures) in [(recordErrors, 2), (queryErrors, 1)] {
            // Said when it fails (twice under the thread sanitizer with every suite at once): which repository, and what it reported.
            #expect(try await eventually { log.errors.all.filter { $0.contains("re-reading changed rows of public.contacts failed") }.count >= failures },
                    "\(failures == 2 ? "the handle's repository" : "the query's repository") reported: \(log.errors.all)")
        }
        #expect(ada.value.name == "Ada" && everyone.value[id: 1]?.name == "Ada")
        try await database.query("GRANT SELECT ON contacts TO \(role)")
        #expect(try await eventually { ada.value.name == "Ada K." }, "the handle kept \(ada.value.name)")
        #expect(try await eventually { everyone.value[id: 1]?.name == "Ada K." }, "the query kept \(everyone.value.map(\.name))")
    }

    @Test("a table missing while everything is read again (a database re-created, a migration under way): once it is back, a handle and a live query converge with no further change")
    func tableMissingForAWhile() async throws {
        let database = try await makeContactsDatabase()
        let repository = LiveRepository(database)
        defer { repository.close() }
        let log = ErrorLog(repository)
        let ada = try await repository.read(Contact.self, id: 1)
        let everyone = try await repository.readAll(Contact.self, orderBy: [.ascending(\.id)])

        // The row changes while its table is away, unannounced; then the feed's connection is
        // cut, so that everything live is read again — while the table is missing.
        try await database.withConnection { connection in
            try await connection.execute(script: """
                ALTER TABLE contacts RENAME TO contacts_away;
                ALTER TABLE contacts_away DISABLE TRIGGER USER;
                UPDATE contacts_away SET name = 'Ada K.' WHERE id = 1;
                ALTER TABLE contacts_away ENABLE TRIGGER USER;
                """)
        }
        try await TestServer.admin.value.query(
            "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE '% (change feed)'",
            [try await database.name()])
        #expect(try await eventually { log.errors.all.contains { $0.contains("does not exist") } })
        #expect(ada.value.name == "Ada" && everyone.value[id: 1]?.name == "Ada")
        try await database.query("ALTER TABLE contacts_away RENAME TO contacts")
        #expect(try await eventually { ada.value.name == "Ada K." }, "the handle kept \(ada.value.name)")
        #expect(try await eventually { everyone.value[id: 1]?.name == "Ada K." }, "the query kept \(everyone.value.map(\.name))")
    }

    @Test("repairs wait 100 ms, then twice as long while they fail, up to 30 s; failures meanwhile join the scheduled one; a failure well after the last repair starts over")
    func backoff() {
        var repair = RereadRepair()
        var now = ContinuousClock.now
        var delays: [Duration] = []
        for _ in 0..<12 {
            delays.append(repair.readFailed(at: now)!)
            #expect(repair.readFailed(at: now) == nil)  // joins the scheduled repair
            now += delays.last!
            repair.repairStarts()
        }
        #expect(delays.prefix(4) == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800)])
        #expect(delays.last == .seconds(30) && zip(delays, delays.dropFirst()).allSatisfy { $0 <= $1 })
        now += .seconds(61)
        #expect(repair.readFailed(at: now) == .milliseconds(100))
        // Short outages a few seconds apart, each repaired at once: each repair waits 100 ms.
        repair.repairStarts()
        for _ in 0..<5 {
            now += .seconds(2)
            #expect(repair.readFailed(at: now) == .milliseconds(100))
            repair.repairStarts()
        }
    }

    @Test("repairs follow failures that can pass (connections, timeouts, privileges, resources, tables and columns a migration re-creates), not rows that cannot be read or data errors")
    func whatIsRepaired() {
        func server(_ state: String) -> PostgresError {
            var error = PostgresError(.server, "x")
            error.sqlState = state
            return error
        }
        for error in [PostgresError(.connectionLost, "x"), PostgresError(.connectionFailed, "x"), server("57014"), server("42501"),
                      server("53300"), server("40001"), server("40P01"), server("55P03"), server("08006"),
                      server("42P01"), server("42703"), server("3F000")] {
            #expect(RereadRepair.mayPass(after: error), "\(error)")
        }
        for error: any Error in [server("22012"), server("22P02"), server("42804"), PostgresError(.closed, "x"), CancellationError()] {
            #expect(!RereadRepair.mayPass(after: error), "\(error)")
        }
    }
}
