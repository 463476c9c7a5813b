import CoreMetrics
import Foundation
@testable import Repository
import Testing

/// The identity map's transitions on their own: real stores, of a table whose rows are never
/// read (the map reads nothing), and a pool that never connects.
@Suite("Identity map: stores by table and key, announcements, aggregates' children")
struct IdentityMapTests {
    typealias Key = LiveRepository.StoreKey

    @Test("a row's store is found under its table and key; an aggregate rooted at the row apart from it")
    func rowsAndAggregates() throws {
        var map = IdentityMap()
        let fixture = try Fixture()
        let row = fixture.register(in: &map, Key(table: "public.a", key: "1"))
        let aggregate = fixture.register(in: &map, Key(table: "public.a", key: "1", isAggregate: true))
        #expect(map[Key(table: "public.a", key: "1")]?.lease(as: StoreLease<RowTable>.self) === row)
        #expect(map[Key(table: "public.a", key: "1", isAggregate: true)]?.lease(as: StoreLease<RowTable>.self) === aggregate)
        #expect(map[Key(table: "public.b", key: "1")] == nil)
        #expect(map[Key(table: "public.a", key: "2")] == nil)
        // Registering again under a key held returns the lease held.
        let (again, isNew) = map.register(Key(table: "public.a", key: "1")) { fixture.store("1") }
        #expect(again === row && !isNew)
        #expect(map.count == 2)
        // Several keys of one table at once, in order.
        let leases = map.leases(as: StoreLease<RowTable>.self, in: "public.a", aggregates: false, keys: ["2", "1", "1"])
        #expect(leases.map { $0 === row } == [false, true, true] && leases[0] == nil)
        #expect(map.leases(as: StoreLease<RowTable>.self, in: "public.a", aggregates: true, keys: ["1"]).first! === aggregate)
        #expect(map.leases(as: StoreLease<RowTable>.self, in: "public.z", aggregates: false, keys: ["1", "2"]).allSatisfy { $0 == nil })
        withExtendedLifetime([row, aggregate]) {}
    }

    @Test("a batch's changes find their stores by index; a truncated table gives every store of it, rows and aggregates")
    func candidates() throws {
        var map = IdentityMap()
        let fixture = try Fixture()
        let held = ["1", "2", "3"].map { fixture.register(in: &map, Key(table: "public.a", key: $0)) }
        let root = fixture.register(in: &map, Key(table: "public.b", key: "9", isAggregate: true))
        let other = fixture.register(in: &map, Key(table: "public.b", key: "8"))
        let changes = [change("public.a", "2"), change("public.c", "1"), change("public.a", "3"), change("public.a", "7")]
        var found = map.candidates(for: changes, keys: keys(changes), announcedAs: 5)
        #expect(found.stores.map(\.change) == [0, 2])
        #expect(found.stores.map { $0.store.keyText } == ["2", "3"])
        #expect(found.truncated.isEmpty && found.truncatedTables.isEmpty)
        // The rows were announced, also the one no store holds.
        #expect(map.announcements.mayHaveChanged(Key(table: "public.a", key: "7"), since: 4))
        #expect(!map.announcements.mayHaveChanged(Key(table: "public.a", key: "1"), since: 4))
        // A table truncated: each of its stores, the aggregate rooted there too.
        let truncation = Change(table: "public.b", operation: .truncate, key: .text(""), version: 0)
        found = map.candidates(for: [truncation], keys: keys([truncation]), announcedAs: 6)
        #expect(found.stores.isEmpty)
        #expect(Set(found.truncated.map { ObjectIdentifier($0.store) }) == [ObjectIdentifier(root.store), ObjectIdentifier(other.store)])
        #expect(found.truncatedTables == ["public.b"])
        withExtendedLifetime((held, root, other)) {}
    }

    @Test("an aggregate rooted at a changed row is a candidate only once a child route names its table")
    func aggregateCandidates() throws {
        var map = IdentityMap()
        let fixture = try Fixture()
        let root = fixture.register(in: &map, Key(table: "public.b", key: "9", isAggregate: true))
        let changes = [change("public.b", "9")]
        #expect(map.candidates(for: changes, keys: keys(changes), announcedAs: 1).stores.isEmpty)
        map.addRoute(route(root: "public.b"), childTable: "public.c")
        map.addRoute(route(root: "public.b"), childTable: "public.c")  // once per aggregate
        #expect(map.childRoutes["public.c"]?.count == 1)
        #expect(map.candidates(for: changes, keys: keys(changes), announcedAs: 2).stores.map { $0.store.keyText } == ["9"])
        // A child row held by it routes to it; an unknown child to no one known.
        map.registerChildren(["40", "41"], of: "public.c", owner: Key(table: "public.b", key: "9", isAggregate: true))
        #expect(map.owners(ofChild: Key(table: "public.c", key: "41"))?.map(\.keyText) == ["9"])
        #expect(map.owners(ofChild: Key(table: "public.c", key: "42")) == nil)
        #expect(map.aggregates(rootedIn: ["public.b"]).map(\.keyText) == ["9"])
        #expect(map.aggregates(rootedIn: ["public.a"]).isEmpty)
        withExtendedLifetime(root) {}
    }

    @Test("entries of stores nobody holds are dropped when the live stores are listed, and past the threshold")
    func pruning() throws {
        var map = IdentityMap()
        let fixture = try Fixture()
        var leases = (0..<10).map { fixture.register(in: &map, Key(table: "public.a", key: String($0))) }
        leases.removeLast(4)  // rows 6 to 9 are held no more
        #expect(map.count == 10)
        #expect(map.allStores().count == 6)
        #expect(map.liveStores().count == 6)
        #expect(map.count == 6)
        // Registering past the threshold drops the empty entries: the map stays about twice the live stores.
        for index in 0..<3000 { _ = fixture.register(in: &map, Key(table: "public.t", key: String(index))) }
        #expect(map.count <= 2 * (leases.count + 1) + 1024)
        withExtendedLifetime(leases) {}
    }

    @Test("a store read before its row was announced is among those announced since; one read after, not")
    func announcedSince() throws {
        var map = IdentityMap()
        let fixture = try Fixture()
        let (one, two) = (fixture.register(in: &map, Key(table: "public.a", key: "1")), fixture.register(in: &map, Key(table: "public.a", key: "2")))
        let changes = [change("public.a", "1")]
        _ = map.candidates(for: changes, keys: keys(changes), announcedAs: 7)
        #expect(map.announcedSince(6, among: [one.store, two.store]).map(\.keyText) == ["1"])
        #expect(map.announcedSince(7, among: [one.store, two.store]).isEmpty)
    }

    // MARK: - Fixture

    private func change(_ table: String, _ key: String) -> Change {
        Change(table: table, operation: .update, key: .text(key), version: 1)
    }

    private func keys(_ changes: [Change]) -> [Key] {
        changes.map { Key(table: $0.table, key: $0.key.description) }
    }

    private func route(root: String) -> ChildRoute {
        ChildRoute(aggregate: ObjectIdentifier(IdentityMapTests.self), rootTable: root, shownChildTable: "c") { _, _ in [] }
    }

    /// Makes stores of ``RowTable`` over a pool that never connects.
    struct Fixture {
        let context: LiveContext

        init() throws {
            let database = Database(try ConnectionConfiguration(url: "postgres://nobody@127.0.0.1:1/none"))
            context = LiveContext(sequence: ReadSequence(), policy: .databaseWins, report: { _ in }, metrics: LiveMetrics(factory: NOOPMetricsHandler.instance),
                                  reads: Locked(ReadCount()), database: database)
        }

        func store(_ key: String) -> LiveStore<RowTable> {
            LiveStore(id: Int64(key) ?? 0, keyText: key, committed: Committed(value: TwoColumns(a: 0, b: 0), version: 1), readAs: 0,
                      table: RowTable(), context: context)
        }

        func register(in map: inout IdentityMap, _ key: Key) -> StoreLease<RowTable> {
            map.register(key) { store(key.key) }.lease
        }
    }
}

/// A table of ``TwoColumns`` rows that is never read or written: the identity map only holds stores.
struct RowTable: LiveTable {
    typealias Content = TwoColumnContent
    typealias ID = Int64

    var qualifiedName: String { "public.a" }
    var shownName: String { "a" }
    static var holdsAggregates: Bool { false }

    func read(_ ids: [Int64]) async throws -> [(id: Int64, committed: Committed<TwoColumnContent>)] { throw Self.unread }
    func read(_ ids: [Int64], using query: FeedQuery) throws -> [(id: Int64, committed: Committed<TwoColumnContent>)] { throw Self.unread }
    func committed(streamed rows: [StreamedRow]) -> [Committed<TwoColumnContent>?] { rows.map { _ in nil } }
    func write(_ write: SyncState<TwoColumnContent>.Write, id: Int64) async throws -> WriteOutcome<TwoColumnContent> { throw Self.unread }

    private static var unread: PostgresError { PostgresError(.invalidStatement, "this table is never read or written") }
}
