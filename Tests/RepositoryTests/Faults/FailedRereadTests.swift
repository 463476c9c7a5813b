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
        try await TestServer.admin.value.query("CREATE ROLE \(role) LOGIN")
        try await database.query("GRANT SELECT, UPDATE ON contacts TO \(role)")
        let limited = Database(database.configuration.user(role))
        defer { limited.close() }
        // One repository re-reads the handle's row itself; the other through its live query's router.
        let records = LiveRepository(limited), queries = LiveRepository(limited)
        defer { records.close(); queries.close() }
        let (recordErrors, queryErrors) = (ErrorLog(records), ErrorLog(queries))
        let ada = try await records.read(Contact.self, id: 1)
        let everyone = try await queries.readAll(Contact.self, orderBy: [.ascending(\.id)])

        try await database.query("REVOKE SELECT ON contacts FROM \(role)")
        try await database.query("UPDATE contacts SET name = 'Ada K.' WHERE id = 1")
        for log in [recordErrors, queryErrors] {
            #expect(try await eventually { log.errors.all.contains { $0.contains("re-reading changed rows of public.contacts failed") } })
        }
        #expect(ada.value.name == "Ada" && everyone.value[id: 1]?.name == "Ada")
        try await database.query("GRANT SELECT ON contacts TO \(role)")
        #expect(try await eventually { ada.value.name == "Ada K." }, "the handle kept \(ada.value.name)")
        #expect(try await eventually { everyone.value[id: 1]?.name == "Ada K." }, "the query kept \(everyone.value.map(\.name))")
    }

    @Test("repairs wait 100 ms, then twice as long while they fail, up to 30 s; failures meanwhile join the scheduled one; a success starts over")
    func backoff() {
        var repair = RereadRepair()
        var delays: [Duration] = []
        for _ in 0..<12 {
            delays.append(repair.readFailed()!)
            #expect(repair.readFailed() == nil)  // joins the scheduled repair
            repair.repairStarts()
        }
        #expect(delays.prefix(4) == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800)])
        #expect(delays.last == .seconds(30) && zip(delays, delays.dropFirst()).allSatisfy { $0 <= $1 })
        repair.readSucceeded()
        #expect(repair.readFailed() == .milliseconds(100))
    }
}
