import AddressBookKit
import Foundation
import IdentifiedCollections
import PropertyBased
import Repository
import Testing

/// A database with the address book's schema.
func makeAddressBookDatabase() async throws -> Database {
    let database = try await TestServer.makeDatabase()
    try await AddressBook.migrate(database)
    return database
}

@Suite("Address book aggregates")
struct AddressBookTests {
    let database: Database
    let book: AddressBook

    init() async throws {
        database = try await makeAddressBookDatabase()
        book = AddressBook(database)
    }

    /// (street, version) of a person's address rows, by position; the version is `xmin`.
    func addressRows(_ person: Int64) async throws -> [(street: String, version: Int64)] {
        try await database.query("SELECT street, xmin::text::bigint FROM addresses WHERE person_id = $1 ORDER BY position", [person])
            .map { (try $0.decode(String.self, at: 0), try $0.decode(Int64.self, at: 1)) }
    }

    func personVersion(_ id: Int64) async throws -> Int64 {
        try await database.query("SELECT xmin::text::bigint FROM people WHERE id = $1", [id])[0].decode(Int64.self, at: 0)
    }

    @Test("reading a person loads their addresses; editing one street updates only that row")
    func editOneChild() async throws {
        let ada = try await book.addPerson(name: "Ada", streets: ["12 St James's Square", "Ockham Park"])
        let id = ada.value.id
        #expect(ada.value.addresses.map(\.street) == ["12 St James's Square", "Ockham Park"])
        let other = try await book.readPerson(id: id)
        #expect(other.value == ada.value)
        let (rowsBefore, personBefore) = (try await addressRows(id), try await personVersion(id))

        other[\.addresses][1][\.street].value = "Horsley Towers; 'quoted' 🏰"
        #expect(ada.value.addresses[1].street == "Horsley Towers; 'quoted' 🏰")
        try await other.save()
        let rows = try await addressRows(id)
        #expect(rows.map(\.street) == ["12 St James's Square", "Horsley Towers; 'quoted' 🏰"])
        #expect(rows[0].version == rowsBefore[0].version && rows[1].version != rowsBefore[1].version)
        #expect(try await personVersion(id) == personBefore)
    }

    @Test("appending, reordering and removing addresses writes the rows and bumps the person's version")
    func structuralEdits() async throws {
        let grace = try await book.addPerson(name: "Grace", streets: ["Arlington"])
        let id = grace.value.id
        let personBefore = try await personVersion(id)
        let added = AddressBookKit.Address(street: "Yale")
        grace[\.addresses].value.append(added)
        grace[\.addresses].value.insert(AddressBookKit.Address(street: "New York"), at: 0)
        try await grace.save()
        #expect(try await addressRows(id).map(\.street) == ["New York", "Arlington", "Yale"])
        #expect(grace.value.addresses.map(\.street) == ["New York", "Arlington", "Yale"])
        #expect(grace.value.addresses[2].id == added.id)

        grace[\.addresses].value.reverse()
        try await grace.save()
        #expect(try await addressRows(id).map(\.street) == ["Yale", "Arlington", "New York"])
        grace[\.addresses].value.removeAll { $0.street == "Arlington" }
        try await grace.save()
        #expect(try await addressRows(id).map(\.street) == ["Yale", "New York"])
        #expect(try await personVersion(id) != personBefore)
    }

    @Test("an appended address whose text holds a NUL character is refused when appended: the list stays, a rename made with it is written")
    func nulInNewChild() async throws {
        let grace = try await book.addPerson(name: "Grace", streets: ["Arlington"])
        let id = grace.value.id
        grace[\.name].value = "Grace Hopper"
        grace[\.addresses].value.append(AddressBookKit.Address(street: "Ya\u{0}le"))
        #expect(grace.value.addresses.map(\.street) == ["Arlington"])
        let error = await #expect(throws: LiveRecordError.self) { try await grace.save() }
        #expect("\(error.map { "\($0)" } ?? "")".contains("the text holds a NUL character"))
        #expect(try await addressRows(id).map(\.street) == ["Arlington"])
        #expect(try await database.query("SELECT name FROM people WHERE id = $1", [id])[0].decode(String.self, at: 0) == "Grace Hopper")
    }

    @Test("changes to address rows by psql refresh the owning person's handle")
    func remoteChildChanges() async throws {
        let edsger = try await book.addPerson(name: "Edsger", streets: ["Nuenen"])
        let id = edsger.value.id
        let seen = Recorder<Author?>()
        let subscription = edsger.observe { seen.append($0.author) }
        try await psql("UPDATE addresses SET street = 'Austin' WHERE person_id = \(id)", database: database)
        #expect(try await eventually { edsger.value.addresses.map(\.street) == ["Austin"] })
        try await psql("INSERT INTO addresses (person_id, position, street) VALUES (\(id), 1, 'Eindhoven')", database: database)
        #expect(try await eventually { edsger.value.addresses.map(\.street) == ["Austin", "Eindhoven"] })
        try await psql("UPDATE addresses SET position = 1 - position WHERE person_id = \(id)", database: database)
        #expect(try await eventually { edsger.value.addresses.map(\.street) == ["Eindhoven", "Austin"] })
        try await psql("DELETE FROM addresses WHERE street = 'Austin'", database: database)
        #expect(try await eventually { edsger.value.addresses.map(\.street) == ["Eindhoven"] })
        #expect(seen.all.allSatisfy { $0 == .database })
        subscription.cancel()
    }

    @Test("two writers on one person — one renames, the other edits and appends addresses — both survive")
    func concurrentEditsMerge() async throws {
        let created = try await book.addPerson(name: "Barbara", streets: ["MIT"])
        let id = created.value.id
        let otherBook = AddressBook(Database(database.configuration))
        let mine = try await book.readPerson(id: id)
        let theirs = try await otherBook.readPerson(id: id)

        theirs[\.addresses][0][\.street].value = "MIT, Cambridge"
        theirs[\.addresses].value.append(AddressBookKit.Address(street: "Stanford"))
        try await theirs.save()
        // Edited before this process heard of their change: the write conflicts on the
        // version, is merged, and goes through.
        mine[\.name].value = "Barbara Liskov"
        try await mine.save()

        let expected = ["MIT, Cambridge", "Stanford"]
        #expect(try await addressRows(id).map(\.street) == expected)
        #expect(try await database.query("SELECT name FROM people WHERE id = $1", [id])[0].decode(String.self, at: 0) == "Barbara Liskov")
        #expect(try await eventually { mine.value.addresses.map(\.street) == expected && theirs.value.name == "Barbara Liskov" })
        otherBook.close()
    }

    @Test("deleting a person cascades: every handle, and the live list, report it")
    func deleteCascades() async throws {
        let alan = try await book.addPerson(name: "Alan", streets: ["Bletchley", "Manchester"])
        let id = alan.value.id
        let everyone = try await book.people()
        let element = everyone[id: id]
        let firstAddress = alan[\.addresses][0]
        try await book.deletePerson(id: id)
        #expect(try await eventually { alan.liveState == .deleted && element.value == nil })
        #expect(firstAddress.value.street == "Bletchley")  // the last known value stays
        #expect(try await addressRows(id).isEmpty)
        alan[\.name].value = "Ghost"
        await #expect(throws: LiveRecordError.self) { try await alan.save() }
        await #expect(throws: AddressBookError.noSuchPerson(id)) { try await book.deletePerson(id: id) }
        await #expect(throws: AddressBookError.noSuchPerson(id)) { try await book.readPerson(id: id) }
    }

    @Test("a child belongs to one aggregate: appended elsewhere first, the write is refused and nothing changes; removed, saved, then appended, it moves")
    func moveChild() async throws {
        let ada = try await book.addPerson(name: "Ada", streets: ["Ockham Park"])
        let bob = try await book.addPerson(name: "Bob")
        let address = ada.value.addresses[0]
        bob[\.addresses].value.append(address)  // still Ada's: its key is taken
        let refused = await #expect(throws: LiveRecordError.self) { try await bob.save() }
        let reason = String(describing: refused)
        #expect(reason.contains("23505") || reason.contains("duplicate key"), "\(reason)")
        #expect(try await eventually { bob.value.addresses.isEmpty })
        #expect(try await addressRows(ada.value.id).map(\.street) == ["Ockham Park"])
        #expect(try await addressRows(bob.value.id).isEmpty)

        ada[\.addresses].value.removeAll { $0.id == address.id }
        try await ada.save()
        bob[\.addresses].value.append(address)
        try await bob.save()
        #expect(try await addressRows(ada.value.id).isEmpty)
        #expect(try await addressRows(bob.value.id).map(\.street) == ["Ockham Park"])
        #expect(try await eventually { ada.value.addresses.isEmpty && bob.value.addresses.map(\.id) == [address.id] })
    }

    @Test("an edit of an address that another connection removes meanwhile: the removal wins, and the conflict names the removal, not a column nobody changed")
    func editOfRemovedChild() async throws {
        let ada = try await book.addPerson(name: "Ada", streets: ["Ockham Park", "Horsley Towers"])
        let removed = ada.value.addresses[1].id
        // Another connection holds the row, so that the edit's UPDATE waits for it, then deletes it.
        let other = try await Connection.connect(database.configuration)
        try await other.execute(script: "BEGIN")
        try await other.query("SELECT 1 FROM addresses WHERE id = $1 FOR UPDATE", [removed])
        ada[\.addresses][1][\.street].value = "Horsley Towers, Surrey"
        #expect(try await eventually {
            try await database.query("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'UPDATE%addresses%'")[0].decode(Int.self, at: 0) == 1
        })
        try await other.query("DELETE FROM addresses WHERE id = $1", [removed])
        try await other.execute(script: "COMMIT")
        let error = await #expect(throws: LiveRecordError.self) { try await ada.save() }
        guard case .conflict(_, _, let columns, _, _, _)? = error else {
            Issue.record("not a conflict: \(String(describing: error))")
            return
        }
        #expect(columns == ["addresses[\(removed)] (removed)"])
        #expect(try await eventually { ada.value.addresses.map(\.street) == ["Ockham Park"] })
        #expect(try await addressRows(ada.value.id).map(\.street) == ["Ockham Park"])
    }

    @Test("the live list follows people and their addresses, and its elements write through")
    func liveList() async throws {
        _ = try await book.addPerson(name: "Grace", streets: ["Arlington"])
        let everyone = try await book.people()
        #expect(everyone.value.map(\.name) == ["Grace"])
        try await psql("INSERT INTO people (name) VALUES ('Ada')", database: database)
        #expect(try await eventually { everyone.value.map(\.name) == ["Ada", "Grace"] })
        let ada = try #require(everyone.value.first)
        try await psql("INSERT INTO addresses (person_id, position, street) VALUES (\(ada.id), 0, 'London')", database: database)
        #expect(try await eventually { everyone.value.first?.addresses.map(\.street) == ["London"] })

        everyone[id: ada.id][\.name].value = "Zelda"  // moves to the end, and writes through
        #expect(everyone.value.map(\.name) == ["Grace", "Zelda"])
        try await everyone.save()
        #expect(try await database.query("SELECT name FROM people WHERE id = $1", [ada.id])[0].decode(String.self, at: 0) == "Zelda")
        let handle = try await book.readPerson(id: ada.id)
        #expect(handle.value.name == "Zelda")
    }

    @Test("100 live queries over people, each its own name: a renamed person costs a few statements, not one per query, and moves from one list to another with their addresses")
    func manyAggregateQueries() async throws {
        let repository = book.repository
        let ada = try await book.addPerson(name: "Ada", streets: ["Ockham Park", "St James's Square"])
        var lists: [Var<IdentifiedArrayOf<AddressBookKit.Person>>] = []
        for index in 0..<100 { lists.append(try await repository.readAll(AddressBookKit.Person.self, where: "name = $1", parameters: ["p\(index)"])) }
        #expect(lists.allSatisfy { $0.value.isEmpty })
        for (step, name) in ["p7", "p8"].enumerated() {
            let before = repository.rowQueries
            try await psql("UPDATE people SET name = '\(name)' WHERE id = \(ada.value.id)", database: database)
            let target = lists[step + 7]
            #expect(try await eventually { target.value.first?.addresses.map(\.street) == ["Ockham Park", "St James's Square"] })
            if step == 1 { #expect(try await eventually { lists[7].value.isEmpty }) }
            let statements = repository.rowQueries - before
            // The router's read of the row, the person's own re-read (root and addresses), and —
            // when the list the person left let go of their aggregate first — reading it anew for
            // the list they joined; never one per live query.
            #expect(statements <= 5, "\(statements) statements for one renamed person under 100 live queries")
        }
        #expect(lists.enumerated().allSatisfy { $0.offset == 8 || $0.element.value.isEmpty })
    }

    @Test("random renames, deletes and re-inserts of people by psql, in bursts: every live list of people by name ends equal to its SQL")
    func aggregateQueriesFollowRandomChanges() async throws {
        let repository = book.repository
        try await database.query("INSERT INTO people (id, name) SELECT i, 'n' || (i % 4) FROM generate_series(1, 12) AS i")
        var lists: [(name: String, live: Var<IdentifiedArrayOf<AddressBookKit.Person>>)] = []
        for name in ["n0", "n1", "n2", "n3"] {
            lists.append((name, try await repository.readAll(AddressBookKit.Person.self, where: "name = $1", parameters: [name])))
        }
        var generator = SystemRandomNumberGenerator()
        let seed = UInt64.random(in: 0...UInt64(UInt32.max), using: &generator)
        var random = Xoshiro(seed: (seed, ~seed, seed &* 0x9E37_79B9_7F4A_7C15, seed ^ 0xBF58_476D_1CE4_E5B9))
        for step in 0..<25 {
            // Three statements in a row, each its own transaction, then a check.
            let burst = (0..<3).map { _ -> String in
                let id = Int.random(in: 1...14, using: &random), name = "n\(Int.random(in: 0...3, using: &random))"
                switch Int.random(in: 0...3, using: &random) {
                case 0: return "UPDATE people SET name = '\(name)' WHERE id = \(id);"
                case 1: return "DELETE FROM people WHERE id = \(id);"
                case 2: return "DELETE FROM people WHERE id = \(id); INSERT INTO people (id, name) VALUES (\(id), '\(name)');"
                default: return "INSERT INTO people (id, name) VALUES (\(id), '\(name)') ON CONFLICT (id) DO UPDATE SET name = excluded.name;"
                }
            }.joined(separator: " ")
            try await psql(burst, database: database)
            for (name, live) in lists {
                let expected = try await database.query("SELECT id FROM people WHERE name = $1 ORDER BY id", [name]).map { try $0.decode(Int64.self, at: 0) }
                let followed = try await eventually { live.value.ids.sorted() == expected && live.value.allSatisfy { $0.name == name } }
                #expect(followed, "seed \(seed), step \(step), after \(burst): \(name) shows \(live.value.ids.sorted()), the server \(expected)")
                if !followed { return }
            }
        }
    }
}
