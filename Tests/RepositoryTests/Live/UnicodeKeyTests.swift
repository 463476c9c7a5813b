import Foundation
@testable import Repository
import Testing

/// Two text keys that differ only in Unicode normalization — `"é"` as one scalar (C3 A9) and
/// as `e` with a combining accent (65 CC 81) — are two rows in PostgreSQL and one id in Swift,
/// whose `String` compares after normalizing. Found by a stranger's run: the second read
/// returned the first row's live value, and a save meant for one row wrote the other.
@Suite("Keys equal in Swift, apart in the database")
struct UnicodeKeyTests {
    struct Account: Record, Equatable {
        static let tableName = "accounts"
        var userId: String
        var name: String
        var id: String { userId }
    }

    static let composed = "\u{E9}", decomposed = "e\u{301}"

    let database: Database
    let repository: LiveRepository

    init() async throws {
        database = try await TestServer.makeDatabase()
        try await database.query("CREATE TABLE accounts (user_id text PRIMARY KEY, name text NOT NULL)")
        try await database.query("INSERT INTO accounts VALUES ($1, 'composed'), ($2, 'decomposed'), ('ada', 'Ada')", [Self.composed, Self.decomposed])
        try await LiveSchema.enable("accounts", on: database)
        repository = LiveRepository(database)
    }

    func name(_ key: String) async throws -> String {
        try await database.query("SELECT name FROM accounts WHERE user_id = $1", [key])[0].decode(String.self, at: 0)
    }

    @Test("the second key is refused in one line naming both, while the first is held; nothing is written to the wrong row")
    func secondReadRefused() async throws {
        #expect(Self.composed == Self.decomposed, "Swift counts them equal: the premise of this suite")
        let composed = try await repository.read(Account.self, id: Self.composed)
        #expect(Array(composed.value.userId.utf8) == [0xC3, 0xA9] && composed.value.name == "composed")
        let second = await Result { try await repository.read(Account.self, id: Self.decomposed) }
        let message = second.failure.map { "\($0)" } ?? ""
        #expect(message.contains("one id in Swift") && message.contains("c3 a9") && message.contains("65 cc 81") && !message.contains("\n"), "\(second)")

        // The held row still follows its own changes, and writes to its own row only.
        try await database.query("UPDATE accounts SET name = 'composed, renamed' WHERE user_id = $1", [Self.composed])
        #expect(try await eventually { composed.value.name == "composed, renamed" })
        composed[\.name].value = "written"
        try await composed.save()
        #expect(try await name(Self.composed) == "written")
        #expect(try await name(Self.decomposed) == "decomposed")
        repository.close()
    }

    @Test("a live query whose rows hold both keys fails in one line, and holds neither as the other")
    func queryRefused() async throws {
        let all = await Result { try await repository.readAll(Account.self) }
        #expect(all.failure.map { "\($0)".contains("one id in Swift") } == true, "\(all)")
        // A query that reads only one of them is unaffected.
        let one = try await repository.readAll(Account.self, where: "name = $1", parameters: ["decomposed"])
        #expect(one.value.map { Array($0.userId.utf8) } == [[0x65, 0xCC, 0x81]])
        repository.close()
    }
}

/// A record whose `id` is not its row's key — computed from another column — makes two rows one
/// live value. Found by a stranger's run: the query held one of two rows, silently, and then
/// stopped following either.
@Suite("An id that is not the row's key")
struct NotTheKeyTests {
    struct Invoice: Record, Equatable {
        static let tableName = "invoices"
        var rowId: Int64
        var total: Int32
        var note: String?
        var id: String { note ?? "" }
        enum CodingKeys: String, CodingKey { case rowId = "id", total, note }
    }

    @Test("two different rows with the same id in Swift: a live query holding both fails in one line naming it; a read by an id the key cannot hold says so")
    func twoRowsOneID() async throws {
        let database = try await TestServer.makeDatabase()
        try await database.query("CREATE TABLE invoices (id bigint PRIMARY KEY, total int NOT NULL, note text)")
        try await database.query("INSERT INTO invoices VALUES (1, 10, 'same'), (2, 20, 'same'), (3, 30, 'own')")
        try await LiveSchema.enable("invoices", on: database)
        let repository = LiveRepository(database)
        defer { repository.close() }
        let all = await Result { try await repository.readAll(Invoice.self, where: "id < $1", parameters: [3]) }
        let message = all.failure.map { "\($0)" } ?? ""
        #expect(message.contains("two different rows have the same id \"same\"") && message.contains("primary key") && !message.contains("\n"), "\(all)")
        // A query that reads only one of them is unaffected.
        let own = try await repository.readAll(Invoice.self, where: "id >= $1", parameters: [2])
        #expect(own.value.map(\.rowId).sorted() == [2, 3])
        // Read by such an id, the key column cannot take it: said in one line.
        let one = await Result { try await repository.read(Invoice.self, id: "nobody") }
        let refusal = one.failure.map { "\($0)" } ?? ""
        #expect(refusal.contains("invoices: the id \"nobody\" is not a value of the key (id)") && refusal.contains("primary key") && !refusal.contains("\n"), "\(one)")
    }
}

/// A live query's order of text is by UTF-8 bytes, as `ORDER BY … COLLATE "C"` orders it —
/// also for text not in Unicode's composed form, which Swift's `<` would place as if composed.
@Suite("Live query order of text")
struct TextOrderTests {
    struct Word: Record, Equatable {
        static let tableName = "words"
        var id: Int64
        var w: String
    }

    @Test("ordered by a text property, the list equals the server's ORDER BY in the C collation, decomposed accents included")
    func byteOrder() async throws {
        let database = try await TestServer.makeDatabase()
        try await database.query("CREATE TABLE words (id bigint PRIMARY KEY, w text COLLATE \"C\" NOT NULL)")
        let words = ["apple", "e\u{301}clair", "\u{E9}clair", "f", "zebra", "Zeta", "eclair", "", "\u{1F600}", "e\u{301}", "e"]
        for (index, word) in words.enumerated() { try await database.query("INSERT INTO words VALUES ($1, $2)", [index + 1, word]) }
        try await LiveSchema.enable("words", on: database)
        let repository = LiveRepository(database)
        let list = try await repository.readAll(Word.self, orderBy: [.ascending(\.w)])
        let server = try await database.query("SELECT id FROM words ORDER BY w, id").map { try $0.decode(Int64.self, at: 0) }
        #expect(list.value.map(\.id) == server)
        // A word written by another connection lands where the server puts it.
        try await database.query("INSERT INTO words VALUES (100, $1)", ["e\u{301}z"])
        #expect(try await eventually { list.value.count == words.count + 1 })
        let after = try await database.query("SELECT id FROM words ORDER BY w, id").map { try $0.decode(Int64.self, at: 0) }
        #expect(list.value.map(\.id) == after)
        repository.close()
    }

    struct Tag: Record, Equatable {
        static let tableName = "tags"
        var label: String
        var id: String { label }
    }

    @Test("with no sort keys, String ids are in the order of their bytes, as ORDER BY in the C collation")
    func stringIDs() async throws {
        let database = try await TestServer.makeDatabase()
        try await database.query("CREATE TABLE tags (label text COLLATE \"C\" PRIMARY KEY)")
        for label in ["e\u{301}z", "f", "\u{E9}", "E", "e", "zz"] { try await database.query("INSERT INTO tags VALUES ($1)", [label]) }
        try await LiveSchema.enable("tags", on: database)
        let repository = LiveRepository(database)
        let list = try await repository.readAll(Tag.self)
        let server = try await database.query("SELECT label FROM tags ORDER BY label").map { Array(try $0.decode(String.self, at: 0).utf8) }
        #expect(list.value.map { Array($0.label.utf8) } == server)
        repository.close()
    }
}
