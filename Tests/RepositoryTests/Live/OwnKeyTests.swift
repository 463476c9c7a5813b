import Foundation
import IdentifiedCollections
@testable import Repository
import Testing

/// A user's own tables: keys that are not a column called `id` — a text key, a key of two
/// columns, an aggregate whose tables are keyed otherwise — read, written, merged, followed.
@Suite("Live records on any primary key")
struct OwnKeyTests {
    struct Account: Record, Equatable {
        static let tableName = "accounts"
        var userId: String
        var name: String
        var id: String { userId }
    }

    let database: Database
    let repository: LiveRepository

    init() async throws {
        database = try await TestServer.makeDatabase()
        try await database.withConnection { connection in
            try await connection.execute(script: """
                CREATE TABLE accounts (user_id text PRIMARY KEY, name text NOT NULL);
                CREATE TABLE members (project_id bigint, user_id text, role text NOT NULL, PRIMARY KEY (project_id, user_id));
                INSERT INTO accounts VALUES ('ada', 'Ada'), ('grace', 'Grace');
                INSERT INTO members VALUES (7, 'ada', 'owner'), (7, 'grace', 'viewer'), (8, 'ada', 'viewer');
                """)
        }
        try await LiveSchema.enable("accounts", on: database)
        try await LiveSchema.enable("members", on: database)
        repository = LiveRepository(database)
    }

    func role(_ project: Int64, _ user: String) async throws -> String? {
        try await database.query("SELECT role FROM members WHERE project_id = $1 AND user_id = $2", [project, user]).first?.decode(String.self, at: 0)
    }

    struct Silent: Record, Equatable {
        static let tableName = "silent"
        var id: Int64
        var name: String
    }

    @Test("a table whose changes the repository does not learn is refused in one line naming the remedy: read, readAll, an aggregate, through notifications and through logical replication")
    func unfollowedTable() async throws {
        try await database.query("CREATE TABLE silent (id bigint PRIMARY KEY, name text NOT NULL)")
        try await database.query("INSERT INTO silent VALUES (1, 'quiet')")
        let notEnabled = await Result { try await repository.read(Silent.self, id: 1) }
        #expect(notEnabled.failure.map { "\($0)".contains("public.silent, whose changes are not announced: enable with LiveSchema.enable") } == true,
                "\(notEnabled)")
        #expect(await Result { try await repository.readAll(Silent.self) }.failure != nil)
        try await LiveSchema.enable("silent", on: database)
        let other = LiveRepository(database)  // a table is looked up once per repository
        #expect(try await other.read(Silent.self, id: 1).value.name == "quiet")
        other.close()

        // Through logical replication, what counts is the publication.
        let replicated = LiveRepository(database, changes: .logicalReplication(publication: "own_key_tests"))
        let notPublished = await Result { try await replicated.read(Account.self, id: "ada") }
        #expect(notPublished.failure.map { "\($0)".contains("public.accounts, not in the publication own_key_tests") } == true, "\(notPublished)")
        try await LiveSchema.publish("accounts", on: database, publication: "own_key_tests")
        let published = LiveRepository(database, changes: .logicalReplication(publication: "own_key_tests"))
        #expect(try await published.read(Account.self, id: "ada").value.name == "Ada")
        // A live query over any SELECT counts the publication too: a published table needs no triggers.
        try await database.query("CREATE TABLE published_only (id bigint PRIMARY KEY, name text NOT NULL)")
        try await LiveSchema.publish("published_only", on: database, publication: "own_key_tests")
        #expect(try await published.readAll(Silent.self, sql: "SELECT * FROM published_only").value.isEmpty)
        let unannounced = await Result { try await repository.readAll(Silent.self, sql: "SELECT * FROM published_only") }
        #expect(unannounced.failure.map { "\($0)".contains("whose changes are not announced") } == true, "\(unannounced)")
        await replicated.shutdown()
        await published.shutdown()
    }

    @Test("a text key named user_id: read, write, merge over another writer, follow psql, deletion, a key edit refused")
    func textKey() async throws {
        let ada = try await repository.read(Account.self, id: "ada")
        ada[\.name].value = "Ada Lovelace"
        try await ada.save()
        #expect(try await database.query("SELECT name FROM accounts WHERE user_id = 'ada'")[0].decode(String.self, at: 0) == "Ada Lovelace")
        try await psql("UPDATE accounts SET name = 'Countess' WHERE user_id = 'ada'", database: database)
        #expect(try await eventually { ada.value.name == "Countess" })
        let again = try await repository.read(Account.self, id: "ada")
        again[\.name].value = "Ada"                             // one store: the first handle sees it
        #expect(ada.value.name == "Ada")
        try await again.save()
        ada[\.userId].value = "lovelace"                       // a key is not edited in place
        let refused = await #expect(throws: LiveRecordError.self) { try await ada.save() }
        // The table as its record spells it, as SQL does (`crm."Order Lines"`), not quoted again as a string.
        #expect(refused.map { "\($0)" }?.contains("column user_id is part of the key of accounts: a live row's key cannot be edited") == true, "\(String(describing: refused))")
        #expect(ada.value.userId == "ada")
        try await database.query("DELETE FROM accounts WHERE user_id = 'ada'")
        #expect(try await eventually { ada.liveState == .deleted })
        await #expect(throws: LiveRecordError.self) { try await repository.read(Account.self, id: "nobody") }
    }

    @Test("a key of two columns: handles, writes, a merge and a same-column conflict, identity")
    func compositeKey() async throws {
        let key = Membership.Key(projectId: 7, userId: "grace")
        let grace = try await repository.read(Membership.self, id: key)
        #expect(grace.value.role == "viewer")
        grace[\.role].value = "editor"
        try await grace.save()
        #expect(try await role(7, "grace") == "editor")
        let other = LiveRepository(database)
        defer { other.close() }
        let graceThere = try await other.read(Membership.self, id: key)
        try await commitUnderneath(database, "UPDATE members SET role = 'admin' WHERE project_id = 7 AND user_id = 'grace'") {
            graceThere[\.role].value = "owner"
        }
        let conflict = await #expect(throws: LiveRecordError.self) { try await graceThere.save() }
        guard case .conflict(_, let keyText, let columns, _, _, _)? = conflict else {
            Issue.record("expected a conflict: \(String(describing: conflict))")
            return
        }
        #expect(columns == ["role"] && keyText == #"["7","grace"]"#)
        #expect(try await eventually { grace.value.role == "admin" && graceThere.value.role == "admin" })
        #expect(try await role(7, "grace") == "admin")
        #expect(try await role(8, "ada") == "viewer")
    }

    @Test("a missing row of a composite key is named by its values in a message, the key text kept as the identity map names it")
    func missingCompositeKey() async throws {
        let missing = await #expect(throws: LiveRecordError.self) { try await repository.read(Membership.self, id: .init(projectId: 9, userId: "Lin Ma")) }
        #expect(missing.map { "\($0)" } == #"no row in public.members has key (9, "Lin Ma")"#)
        guard case .notFound(_, let key)? = missing else { return }
        #expect(key == #"["9","Lin Ma"]"#)
    }

    /// A key struct with the key's columns in another order than the primary key's.
    struct Reversed: Record, Equatable {
        static let tableName = "members"
        struct Key: Hashable, Codable, Sendable, Comparable {
            var userId: String
            var projectId: Int64
            static func < (a: Key, b: Key) -> Bool { (a.projectId, a.userId) < (b.projectId, b.userId) }
        }
        var projectId: Int64
        var userId: String
        var role: String
        var id: Key { Key(userId: userId, projectId: projectId) }
    }

    @Test("a key struct whose columns are not in the primary key's order is refused in one line by read and by readAll alike")
    func keyOutOfOrder() async throws {
        let message = "the key of public.members is project_id, user_id in that order, but Key has user_id where project_id is"
        let read = await #expect(throws: PostgresError.self) { try await repository.read(Reversed.self, id: .init(userId: "ada", projectId: 7)) }
        #expect(read?.message == message)
        let all = await #expect(throws: PostgresError.self) { try await repository.readAll(Reversed.self, orderBy: [.ascending(\.role)]) }
        #expect(all?.message == message)
    }

    /// A scalar id over a key of two columns.
    struct Parted: Record, Equatable {
        static let tableName = "parted"
        var id: Int64
        var region: Int64
        var v: Int64
    }

    @Test("a scalar id over a key of several columns is refused in one line by read and by readAll, on an empty table too (a stranger's run saw no rows, for good, and no error)")
    func scalarIDOverCompositeKey() async throws {
        try await database.query("CREATE TABLE parted (id bigint, region bigint, v bigint NOT NULL, PRIMARY KEY (id, region))")
        try await LiveSchema.enable("parted", on: database)
        let message = "the key of public.parted is id, region, but Parted.ID is Int64, one value: make the id a struct of those columns, in key order"
        let all = await #expect(throws: PostgresError.self) { try await repository.readAll(Parted.self) }
        #expect(all?.message == message)
        let read = await #expect(throws: PostgresError.self) { try await repository.read(Parted.self, id: 1) }
        #expect(read?.message == message)
    }

    struct Padded: Record, Equatable {
        static let tableName = "padded"
        var id: String
        var note: String
    }

    @Test("a char(n) key, whose values PostgreSQL pads, is refused in one line by read and readAll")
    func paddedKey() async throws {
        try await database.query("CREATE TABLE padded (id char(5) PRIMARY KEY, note text NOT NULL)")
        try await database.query("INSERT INTO padded VALUES ('ab', 'x')")
        try await LiveSchema.enable("padded", on: database)
        let message = "the key column id of public.padded is char(n), whose values PostgreSQL pads with spaces: live values need a key of another type (text or varchar)"
        let read = await #expect(throws: PostgresError.self) { try await repository.read(Padded.self, id: "ab") }
        #expect(read?.message == message)
        let all = await #expect(throws: PostgresError.self) { try await repository.readAll(Padded.self) }
        #expect(all?.message == message)
    }

    @Test("a live query over a composite-keyed table follows inserts, updates, key changes and deletes, equal to a re-run")
    func compositeQuery() async throws {
        let team = try await repository.readAll(Membership.self, where: "project_id = $1", parameters: [7], orderBy: [.ascending(\.role)])
        func rerun() async throws -> [Membership] {
            try await database.query("SELECT * FROM members WHERE project_id = 7 ORDER BY role COLLATE \"C\", project_id, user_id COLLATE \"C\"").decode(Membership.self)
        }
        #expect(team.value.elements == (try await rerun()))
        for statement in ["INSERT INTO members VALUES (7, 'lin', 'admin'), (9, 'lin', 'owner')",
                          "UPDATE members SET role = 'zz' WHERE project_id = 7 AND user_id = 'ada'",
                          "UPDATE members SET user_id = 'hopper' WHERE project_id = 7 AND user_id = 'grace'",
                          "UPDATE members SET project_id = 7, user_id = 'from8' WHERE project_id = 8",
                          "DELETE FROM members WHERE project_id = 7 AND user_id = 'lin'"] {
            try await psql(statement, database: database)
            let expected = try await rerun()
            #expect(try await eventually { team.value.elements == expected }, "after \(statement): \(team.value.ids) vs \(expected.map(\.id))")
        }
        let element = team[id: Membership.Key(projectId: 7, userId: "hopper")]
        element[\.role].value = "aa"
        try await team.save()
        #expect(try await role(7, "hopper") == "aa")
        #expect(team.value.first?.userId == "hopper")
    }
}

/// An aggregate over tables keyed otherwise: orders by `code`, their lines by `line_id`,
/// lines pointing at their order through `order_code`.
@Suite("Aggregates on any primary key")
struct OwnKeyAggregateTests {
    struct OrderRow: Record, Equatable {
        static let tableName = "orders"
        var code: String
        var customer: String
        var id: String { code }
    }

    struct Line: Record, Equatable {
        static let tableName = "order_lines"
        var lineId: UUID
        var item: String
        var id: UUID { lineId }
    }

    struct Order: Aggregate {
        static let parentColumn = "order_code"
        static let positionColumn = "position"
        var code: String
        var customer: String
        var lines: [Line]
        var id: String { code }
        init(root: OrderRow, children: [Line]) { (code, customer, lines) = (root.code, root.customer, children) }
        var root: OrderRow { OrderRow(code: code, customer: customer) }
        var children: [Line] { lines }
    }

    /// A database with the orders and their lines, both enabled, holding the rows `inserts` adds.
    static func ordersDatabase(_ inserts: String) async throws -> Database {
        let database = try await TestServer.makeDatabase()
        try await database.withConnection { connection in
            try await connection.execute(script: """
                CREATE TABLE orders (code text PRIMARY KEY, customer text NOT NULL);
                CREATE TABLE order_lines (line_id uuid PRIMARY KEY, order_code text NOT NULL REFERENCES orders ON DELETE CASCADE,
                                          position integer NOT NULL, item text NOT NULL);
                """ + inserts)
        }
        try await LiveSchema.enable("orders", on: database)
        try await LiveSchema.enable("order_lines", on: database)
        return database
    }

    @Test("read, append, edit, move and remove lines; another process's new line arrives")
    func order() async throws {
        let database = try await Self.ordersDatabase("""
            INSERT INTO orders VALUES ('A-1', 'Ada');
            INSERT INTO order_lines VALUES ('00000000-0000-0000-0000-000000000001', 'A-1', 0, 'tea');
            """)
        let repository = LiveRepository(database)
        defer { repository.close() }
        let order = try await repository.read(Order.self, id: "A-1")
        #expect(order.value.lines.map(\.item) == ["tea"])
        order[\.lines].value.append(Line(lineId: UUID(), item: "scones"))
        order[\.lines][0][\.item].value = "green tea"
        order[\.customer].value = "Ada Lovelace"
        try await order.save()
        func lines() async throws -> [String] {
            try await database.query("SELECT item FROM order_lines WHERE order_code = 'A-1' ORDER BY position").map { try $0.decode(String.self, at: 0) }
        }
        #expect(try await lines() == ["green tea", "scones"])
        order[\.lines].value.swapAt(0, 1)
        try await order.save()
        #expect(try await lines() == ["scones", "green tea"])
        try await psql("INSERT INTO order_lines VALUES (gen_random_uuid(), 'A-1', 2, 'jam')", database: database)
        #expect(try await eventually { order.value.lines.map(\.item) == ["scones", "green tea", "jam"] })
        order[\.lines].value.removeFirst()
        try await order.save()
        #expect(try await lines() == ["green tea", "jam"])
        let everyone = try await repository.readAll(Order.self, orderBy: [.ascending(\.customer)])
        #expect(everyone.value.map(\.code) == ["A-1"])
        try await psql("DELETE FROM orders WHERE code = 'A-1'", database: database)
        #expect(try await eventually { order.liveState == .deleted && everyone.value.isEmpty })
    }

    @Test("positions another process left with gaps or ties are rewritten with an append or a move: the order saved is the order kept")
    func positionsAfterOthersEdits() async throws {
        let database = try await Self.ordersDatabase("""
            INSERT INTO orders VALUES ('B-2', 'Grace');
            INSERT INTO order_lines VALUES (gen_random_uuid(), 'B-2', 0, 'a'), (gen_random_uuid(), 'B-2', 1, 'b'), (gen_random_uuid(), 'B-2', 2, 'c');
            """)
        let repository = LiveRepository(database)
        defer { repository.close() }
        let order = try await repository.read(Order.self, id: "B-2")
        func stored() async throws -> [String] {
            try await database.query("SELECT position || ':' || item FROM order_lines WHERE order_code = 'B-2' ORDER BY position, item")
                .map { try $0.decode(String.self, at: 0) }
        }
        // Another process deletes the middle line: positions 0 and 2 are left.
        try await psql("DELETE FROM order_lines WHERE item = 'b'", database: database)
        #expect(try await eventually { order.value.lines.map(\.item) == ["a", "c"] })
        order[\.lines].value.append(Line(lineId: UUID(), item: "d"))
        try await order.save()
        #expect(try await stored() == ["0:a", "1:c", "2:d"])
        // Another process deletes the first line and adds one far after the others; the list is
        // then reversed, which leaves the middle line at its index, but not at its position.
        try await psql("DELETE FROM order_lines WHERE item = 'a'; INSERT INTO order_lines VALUES (gen_random_uuid(), 'B-2', 9, 'e')", database: database)
        #expect(try await eventually { order.value.lines.map(\.item) == ["c", "d", "e"] })
        order[\.lines].value.reverse()
        try await order.save()
        #expect(try await stored() == ["0:e", "1:d", "2:c"])
        // An edit of one line by another process re-reads the order: it stays as saved.
        try await psql("UPDATE order_lines SET item = 'c2' WHERE item = 'c'", database: database)
        #expect(try await eventually { order.value.lines.map(\.item) == ["e", "d", "c2"] })
    }
}
