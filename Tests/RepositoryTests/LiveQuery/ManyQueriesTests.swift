import Foundation
import IdentifiedCollections
import PropertyBased
@testable import Repository
import Testing

/// Hundreds of live queries with random conditions — those this process evaluates (NULLs,
/// ranges, text, NaN) and those only the server can check — over one table that psql and this
/// process change at random: after every step, every query equals running its SQL again.
@Suite("Many live queries")
struct ManyQueriesTests {
    struct Item: Record, Equatable {
        static let tableName = "items"
        var id: Int64
        var owner: Int32?
        var tag: String?
        var code: String?
        var score: Double?
        var flag: Bool?
        var note: String?
    }

    static let setup = """
        CREATE TABLE items (id bigint PRIMARY KEY, owner int, tag text, code text COLLATE "C", score float8, flag bool, note text);
        INSERT INTO items SELECT n, n % 7, CASE WHEN n % 5 = 0 THEN NULL ELSE chr(97 + n % 4) || n END, chr(65 + n % 26) || n,
            CASE n % 9 WHEN 0 THEN 'NaN' WHEN 1 THEN NULL ELSE (n % 13) - 6.5 END, CASE WHEN n % 3 = 0 THEN NULL ELSE n % 2 = 0 END, NULL
        FROM generate_series(1, 60) n;
        """

    /// A random condition and its parameters: one of those this process evaluates, or (unless
    /// `evaluatedHere`) of those the server checks.
    static func condition(_ random: inout Xoshiro, evaluatedHere: Bool = false) -> (sql: String, parameters: [any SQLValueConvertible]) {
        let owner = Int.random(in: 0...7, using: &random), score = Double(Int.random(in: -8...8, using: &random)) / 2
        let tag = ["a", "b", "c", "d", "a1", "zz"].randomElement(using: &random)!
        switch Int.random(in: 0..<(evaluatedHere ? 13 : 18), using: &random) {
        case 0: return ("owner = $1", [owner])
        case 1: return ("owner IN ($1, $2, NULL)", [owner, (owner + 3) % 7])
        case 2: return ("owner <> $1 AND flag", [owner])
        case 3: return ("score > $1", [score])
        case 4: return ("score BETWEEN $1 AND $2", [score, score + 2])
        case 5: return ("score = 'NaN' OR score IS NULL", [])
        case 6: return ("tag LIKE $1", [tag + "%"])
        case 7: return ("tag = $1 OR note IS NOT NULL", [tag])
        case 8: return ("NOT flag", [])
        case 9: return ("code < $1", [String(UnicodeScalar(UInt8(65 + owner * 3))) + "5"])
        case 10: return ("(owner = $1 AND score <= $2) OR tag IS NULL", [owner, score])
        case 11: return ("owner NOT IN ($1) AND score NOT BETWEEN $2 AND 1", [owner, score])
        case 12: return ("flag IS NULL AND owner = $1", [owner])
        // Outside the subset: the server checks these, in one statement for all of them.
        case 13: return ("length(tag) > $1", [owner])
        case 14: return ("lower(code) LIKE $1", [tag + "%"])
        case 15: return ("owner + 1 = $1", [owner])
        case 16: return ("tag ILIKE $1", [tag.uppercased() + "%"])
        default: return ("coalesce(note, tag, 'x') <> 'x'", [])
        }
    }

    static func statement(_ random: inout Xoshiro, next id: inout Int64) -> String {
        let row = Int.random(in: 1...Int(id), using: &random)
        let value = ["NULL", "'NaN'", "0", "2.5", "-3", "6"].randomElement(using: &random)!
        switch Int.random(in: 0..<8, using: &random) {
        case 0:
            id += 1
            return "INSERT INTO items VALUES (\(id), \(Int.random(in: 0...7, using: &random)), 'a\(id)', 'Q\(id)', \(value), true, NULL)"
        case 1: return "UPDATE items SET owner = \(Int.random(in: 0...7, using: &random)) WHERE id = \(row)"
        case 2: return "UPDATE items SET score = \(value) WHERE id % 5 = \(row % 5)"
        case 3: return "UPDATE items SET tag = \(["NULL", "'a9'", "'bz'", "'C1'"].randomElement(using: &random)!) WHERE id = \(row)"
        case 4: return "UPDATE items SET flag = NOT coalesce(flag, false), note = CASE WHEN note IS NULL THEN 'n' END WHERE id = \(row)"
        case 5: return "DELETE FROM items WHERE id = \(row)"
        case 6: return "UPDATE items SET code = 'A' || id WHERE owner = \(row % 7)"
        default: return "UPDATE items SET id = id + 1000 WHERE id = \(row)"   // the key changes
        }
    }

    /// Through logical replication, the queries are those evaluated here: the rows the stream
    /// carries are routed as they are, with no read (a query the server checks has them read).
    @Test("200 random live queries, 40 random statements by psql and this process: after each, every query equals its SQL run again",
          arguments: [ChangeSource.notifications, .logicalReplication])
    func randomQueries(through source: ChangeSource) async throws {
        let streams = source != .notifications
        let database = try await TestServer.makeDatabase(replication: streams)
        try await database.withConnection { try await $0.execute(script: Self.setup) }
        if streams { try await LiveSchema.publish("items", on: database) } else { try await LiveSchema.enable("items", on: database) }
        let repository = LiveRepository(database, changes: source)
        defer { repository.close() }
        // Seeded, so that a failing run can be told apart and replayed.
        let seed = UInt64.random(in: 1...UInt64(UInt32.max))
        var random = Xoshiro(seed: (seed, ~seed, seed &* 0x9E37_79B9_7F4A_7C15, seed ^ 0xBF58_476D_1CE4_E5B9))
        var queries: [(sql: String, parameters: [any SQLValueConvertible], live: Var<IdentifiedArrayOf<Item>>)] = []
        for _ in 0..<200 {
            let (sql, parameters) = Self.condition(&random, evaluatedHere: streams)
            queries.append((sql, parameters, try await repository.readAll(Item.self, where: sql, parameters: parameters, orderBy: [.ascending(\.id)])))
        }
        let router = try #require(repository.queries.withLock { $0.router(for: ObjectIdentifier(Item.self)) } as? RecordQueryRouter<Item>)
        let evaluated = queries.count - router.serverCheckedCount
        var next: Int64 = 60
        var statements = 0, readsPerStatement: [Int] = [], rowsRead = 0
        for step in 0..<40 {
            let sql = Self.statement(&random, next: &next)
            let before = repository.rowQueries, rowsBefore = repository.rowsRead
            if step.isMultiple(of: 2) { try await psql(sql, database: database) } else { try await database.query(sql) }
            statements += 1
            for (condition, parameters, live) in queries {
                let expected = try await database.query("SELECT * FROM items WHERE \(condition) ORDER BY id", parameters).decode(Item.self)
                // Compared by their text: a NaN score is never == itself.
                let followed = try await eventually { live.value.elements.map { "\($0)" } == expected.map { "\($0)" } }
                #expect(followed, "seed \(seed), after \(sql): \(condition) \(parameters) shows \(live.value.ids.elements), the server \(expected.map(\.id))")
                if !followed { return }
            }
            readsPerStatement.append(repository.rowQueries - before)
            rowsRead += repository.rowsRead - rowsBefore
        }
        print("many live queries (seed \(seed), \(source)): \(queries.count) queries (\(evaluated) evaluated here, \(router.serverCheckedCount) by the server), "
              + "\(statements) statements, row reads per statement: \(readsPerStatement.min() ?? 0)–\(readsPerStatement.max() ?? 0), \(rowsRead) rows read in all")
        #expect(readsPerStatement.allSatisfy { $0 <= 2 }, "\(readsPerStatement)")
    }

    @Test("live queries that are let go are forgotten by their router at once, even ones no change would ever reach")
    func releasedQueriesForgotten() async throws {
        let database = try await TestServer.makeDatabase()
        try await database.withConnection { try await $0.execute(script: Self.setup) }
        try await LiveSchema.enable("items", on: database)
        let repository = LiveRepository(database)
        defer { repository.close() }
        var queries: [Var<IdentifiedArrayOf<Item>>] = []
        for owner in 0..<300 { queries.append(try await repository.readAll(Item.self, where: "owner = $1", parameters: [owner + 1000])) }
        let kept = try await repository.readAll(Item.self, where: "owner = $1", parameters: [3])
        let router = try #require(repository.queries.withLock { $0.router(for: ObjectIdentifier(Item.self)) } as? RecordQueryRouter<Item>)
        #expect(router.count == 301)
        queries.removeAll()
        #expect(router.count == 1)
        try await psql("UPDATE items SET note = 'still followed' WHERE owner = 3", database: database)
        #expect(try await eventually { kept.value.elements.allSatisfy { $0.note == "still followed" } && !kept.value.isEmpty })
    }

    struct Name: Record, Equatable {
        static let tableName = "names"
        var id: Int64
        var name: String
    }

    @Test("a column with a case-insensitive (nondeterministic) collation is left to the server: 'ADA' = 'ada' there, so here too")
    func nondeterministicCollation() async throws {
        let database = try await TestServer.makeDatabase()
        try await database.withConnection { try await $0.execute(script: """
            CREATE COLLATION case_insensitive (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
            CREATE TABLE names (id bigint PRIMARY KEY, name text COLLATE case_insensitive NOT NULL);
            INSERT INTO names VALUES (1, 'Ada'), (2, 'Grace');
            """) }
        try await LiveSchema.enable("names", on: database)
        let repository = LiveRepository(database)
        defer { repository.close() }
        let ada = try await repository.readAll(Name.self, where: "name = $1", parameters: ["ada"], orderBy: [.ascending(\.id)])
        #expect(ada.value.ids.elements == [1])
        try await psql("INSERT INTO names VALUES (3, 'ADA'); UPDATE names SET name = 'aDa' WHERE id = 2", database: database)
        #expect(try await eventually { ada.value.ids.elements == [1, 2, 3] }, "\(ada.value.ids.elements)")
    }
}

extension ManyQueriesTests {
    @Test("a condition the server fails on one row of a statement (an overflow) holds back the query until the row is fixed, then it takes the whole statement")
    func conditionFailingOnOneRow() async throws {
        let database = try await TestServer.makeDatabase()
        try await database.withConnection { try await $0.execute(script: Self.setup) }
        try await LiveSchema.enable("items", on: database)
        let repository = LiveRepository(database)
        defer { repository.close() }
        let overflowing = try await repository.readAll(Item.self, where: "owner + 1 > $1", parameters: [0], orderBy: [.ascending(\.id)])
        let other = try await repository.readAll(Item.self, where: "length(tag) > $1", parameters: [0], orderBy: [.ascending(\.id)])
        try await psql("UPDATE items SET owner = CASE WHEN id = 5 THEN 2147483647 ELSE 100 + id END WHERE id <= 10", database: database)
        func expected(_ condition: String) async throws -> [Int64] {
            try await database.query("SELECT id FROM items WHERE \(condition) ORDER BY id").map { try $0.decode(Int64.self, column: "id") }
        }
        let otherIDs = try await expected("length(tag) > 0")
        #expect(try await eventually { other.value.ids.elements == otherIDs && other.value[id: 1]?.owner == 101 })
        try await psql("UPDATE items SET owner = 0 WHERE id = 5", database: database)
        let ids = try await expected("owner + 1 > 0")
        let followed = try await eventually { overflowing.value.ids.elements == ids && overflowing.value[id: 1]?.owner == 101 }
        #expect(followed, "\(overflowing.value.elements.prefix(10).map { "\($0.id): \($0.owner.map(String.init) ?? "nil")" })")
    }
}
