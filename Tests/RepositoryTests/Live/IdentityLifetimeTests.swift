import Foundation
@testable import Repository
import Testing

/// How long the identity map keeps a row's live store: while a handle, a sub-reference or a
/// live query holds it, and while its write is under way — then no longer.
@Suite("Identity map lifetime")
struct IdentityLifetimeTests {
    let database: Database
    let repository: LiveRepository

    init() async throws {
        database = try await makeContactsDatabase()
        repository = LiveRepository(database)
    }

    @Test("handles let go while their edit is being written: a read meanwhile finds the same value, with the edit, and its save() waits for that write")
    func writeUnderWayKeepsTheStore() async throws {
        let locker = Database(database.configuration, maximumConnections: 1)
        defer { locker.close() }
        try await locker.transaction { connection in
            // Another session holds the row: the write waits on its lock.
            try await connection.query("SELECT * FROM contacts WHERE id = 1 FOR UPDATE")
            do {
                let ada = try await repository.read(Contact.self, id: 1)
                ada[\.name].value = "Ada, written while nobody holds her"
            }
            let name = try await database.name()
            #expect(try await eventually {
                try await TestServer.admin.value.query(
                    "SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' AND query LIKE 'UPDATE%'", [name]).count == 1
            })
            let again = try await repository.read(Contact.self, id: 1)
            #expect(again.value.name == "Ada, written while nobody holds her")
        }
        let again = try await repository.read(Contact.self, id: 1)
        try await again.save()
        #expect(try await database.query("SELECT name FROM contacts WHERE id = 1")[0].decode(String.self, at: 0) == "Ada, written while nobody holds her")
    }

    @Test("a sub-reference alone keeps the value shared; once nothing holds it, a read fetches the row anew")
    func subReferenceKeepsTheStore() async throws {
        var name: Var<String>? = try await repository.read(Contact.self, id: 2)[\.name]
        var whole: Var<Contact>? = try await repository.read(Contact.self, id: 2)
        name?.value = "Grace, edited through the part"
        #expect(whole?.value.name == "Grace, edited through the part")  // the same value, not a copy read anew
        try await whole?.save()
        (name, whole) = (nil, nil)
        let before = repository.rowQueries
        #expect(try await eventually {
            _ = try await repository.read(Contact.self, id: 2)
            return repository.rowQueries > before
        })
    }

    @Test("a live query's members stay shared with handles read later, after every earlier handle is gone")
    func queryMembersKeepTheirStores() async throws {
        let all = try await repository.readAll(Contact.self, where: "id <= 3")
        do {
            let grace = try await repository.read(Contact.self, id: 2)
            grace[\.name].value = "Grace, through a handle"
            try await grace.save()
        }
        let grace = try await repository.read(Contact.self, id: 2)
        grace[\.name].value = "Grace, through a second handle"
        #expect(all.value[id: 2]?.name == "Grace, through a second handle")
        all[id: 2][\.email].value = "grace@query.example"
        #expect(grace.value.email == "grace@query.example")
        try await all.save()
    }
}
