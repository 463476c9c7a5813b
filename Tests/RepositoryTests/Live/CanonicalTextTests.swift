import Foundation
@testable import Repository
import Testing

/// Values Swift's `==` calls equal that the database holds as different: text spelled with
/// different bytes (`String`'s `==` is canonical equivalence — a precomposed `é` equals `e` and a
/// combining accent) and `0.0` against `-0.0`. Live values follow the database: an edit to the
/// other spelling is written, and another process's change to it arrives.
@Suite("Live records: values == calls equal but the database does not")
struct CanonicalTextTests {
    struct Member: Record, Equatable {
        static let tableName = "spellings"
        var id: Int64
        var name: String
        var email: String
        var ratio: Double
    }

    static let composed = "Jos\u{E9}"  // 4a 6f 73 c3 a9
    static let decomposed = "Jose\u{301}"  // 4a 6f 73 65 cc 81

    let database: Database
    let repository: LiveRepository

    init() async throws {
        #expect(Self.composed == Self.decomposed)  // what this suite is about
        database = try await TestServer.makeDatabase()
        try await database.query("CREATE TABLE spellings (id bigint PRIMARY KEY, name text NOT NULL, email text NOT NULL, ratio float8 NOT NULL)")
        try await database.query("INSERT INTO spellings VALUES (1, $1, 'a@x', 0), (2, 'Josf', 'b@x', 0), (3, $1, 'c@x', 0)", [Self.composed])
        try await LiveSchema.enable("spellings", on: database)
        repository = LiveRepository(database)
    }

    /// The bytes of row `id`'s name as stored.
    func storedName(_ id: Int64) async throws -> [UInt8] {
        try await database.query("SELECT name FROM spellings WHERE id = $1", [id])[0].decode(String.self, at: 0).utf8.map { $0 }
    }

    @Test("another process rewrites a name in its decomposed spelling: the handle and the live query take the new bytes, in the server's byte order")
    func theirRespellingArrives() async throws {
        let handle = try await repository.read(Member.self, id: 1)
        let list = try await repository.readAll(Member.self, where: "id IN (1, 2)", orderBy: [.ascending(\.name)])
        #expect(list.value.map(\.id) == [2, 1])  // "Josf" < "José" in bytes (0x66 < 0xc3)
        try await psql("UPDATE spellings SET name = E'Jose\\u0301' WHERE id = 1", database: database)
        let decomposed = Array(Self.decomposed.utf8)
        #expect(try await eventually { Array(handle.value.name.utf8) == decomposed })
        #expect(try await eventually { list.value[id: 1].map { Array($0.name.utf8) } == decomposed })
        let serverOrder = try await database.query("SELECT id FROM spellings WHERE id IN (1, 2) ORDER BY name COLLATE \"C\", id").map { try $0.decode(Int64.self, at: 0) }
        #expect(serverOrder == [1, 2])  // "Jose…" < "Josf"
        #expect(try await eventually { list.value.map(\.id) == serverOrder })
    }

    @Test("a local edit to the other spelling, through a handle and through a live query, is written; the name's observer is told")
    func ourRespellingIsWritten() async throws {
        let handle = try await repository.read(Member.self, id: 1)
        let told = Recorder<String>()
        let subscription = handle[\.name].observe { told.append($0.new) }
        defer { subscription.cancel() }
        handle[\.name].value = Self.decomposed
        try await handle.save()
        #expect(try await storedName(1) == Array(Self.decomposed.utf8))
        #expect(told.all.map { Array($0.utf8) } == [Array(Self.decomposed.utf8)])

        let list = try await repository.readAll(Member.self, where: "id = 3")
        list[id: 3][\.name].value = Self.decomposed
        try await list.save()
        #expect(try await storedName(3) == Array(Self.decomposed.utf8))
    }

    @Test("a concurrent commit respelling a name is not taken for our value: our other column's write keeps their bytes")
    func theirRespellingSurvivesOurWrite() async throws {
        let handle = try await repository.read(Member.self, id: 1)
        try await psql("UPDATE spellings SET name = E'Jose\\u0301' WHERE id = 1", database: database)
        #expect(try await eventually { Array(handle.value.name.utf8) == Array(Self.decomposed.utf8) })
        handle[\.email].value = "after@x"
        try await handle.save()
        #expect(try await storedName(1) == Array(Self.decomposed.utf8))
        #expect(Array(handle.value.name.utf8) == Array(Self.decomposed.utf8))
    }

    @Test("a String or String? part's observers hear a change of its bytes, however == compares them")
    func partObservers() {
        struct Profile: Equatable { var name: String; var nickname: String? }
        let profile = Var(Profile(name: Self.composed, nickname: Self.composed))
        let names = Recorder<String>(), nicknames = Recorder<String?>()
        let subscriptions = [profile[\.name].observe { names.append($0.new) }, profile[\.nickname].observe { nicknames.append($0.new) }]
        defer { subscriptions.forEach { $0.cancel() } }
        profile[\.name].value = Self.decomposed
        profile[\.nickname].value = Self.decomposed
        profile[\.nickname].value = Self.decomposed  // the same bytes: nobody is told
        #expect(names.all.map { Array($0.utf8) } == [Array(Self.decomposed.utf8)])
        #expect(nicknames.all.map { $0.map { Array($0.utf8) } } == [Array(Self.decomposed.utf8)])
    }

    @Test("0.0 set to -0.0 is written, and -0 read back from the database")
    func negativeZeroIsWritten() async throws {
        let handle = try await repository.read(Member.self, id: 2)
        handle[\.ratio].value = -0.0
        try await handle.save()
        let stored = try await database.query("SELECT ratio::text FROM spellings WHERE id = 2")[0].decode(String.self, at: 0)
        #expect(stored == "-0")
        #expect(handle.value.ratio.sign == .minus)
    }
}
