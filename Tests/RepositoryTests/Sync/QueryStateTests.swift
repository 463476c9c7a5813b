import IdentifiedCollections
import PropertyBased
@testable import Repository
import Testing

/// A live query's state machine without a database: membership and contents change together.
@Suite("Query state")
struct QueryStateTests {
    struct Row: Identifiable, Equatable, Sendable {
        var id: Int
        var name: String
    }

    /// A member's value, in memory.
    final class Held: MemberStore, @unchecked Sendable {  // only read in these single-threaded tests
        var value: Row
        init(_ value: Row) { self.value = value }
        var state: LiveState { .live }
        func save() async throws {}
        func enrolSave() -> Int { 0 }
        func awaitSave(_ ticket: Int) async throws {}
        func subscribe(member _: ObjectIdentifier, _ handler: @escaping @Sendable (Update<Row>) -> Void) -> Subscription { Subscription {} }
        func edit(from old: Row, to new: Row, author: Author?) { value = new }
    }

    typealias State = QueryState<Row>

    func read(_ rows: [Row], checked: [Int]?, stores: inout [Int: Held]) -> State.Read {
        State.Read(checked: checked, matching: rows.map { row in
            let store = stores[row.id] ?? Held(row)
            stores[row.id] = store
            return (row, store)
        })
    }

    func subscriptions(_ ids: [Int]) -> [Int: Subscription] {
        Dictionary(uniqueKeysWithValues: ids.map { ($0, Subscription {}) })
    }

    @Test("a read changes membership and contents in one transition, in order, and reports whether anything changed")
    func apply() {
        var state = State(order: QueryOrder(keys: [.ascending(\.name)]))
        var stores: [Int: Held] = [:]
        let first = read([Row(id: 1, name: "Grace"), Row(id: 2, name: "Ada")], checked: nil, stores: &stores)
        #expect(state.apply(first, subscriptions: subscriptions([1, 2])).changed)
        #expect(state.elements.elements == [Row(id: 2, name: "Ada"), Row(id: 1, name: "Grace")])

        // Row 2 stops matching and row 1 is renamed, in one read of both: one change.
        let second = read([Row(id: 1, name: "Aaron")], checked: [1, 2], stores: &stores)
        let (changed, cancel) = state.apply(second, subscriptions: subscriptions([1]))
        #expect(changed)
        #expect(state.elements.elements == [Row(id: 1, name: "Aaron")])
        #expect(cancel.count == 2)  // row 2's subscription, and the spare one made for row 1
        #expect(state.members.keys.sorted() == [1])

        // The same read again changes nothing.
        #expect(!state.apply(second, subscriptions: [:]).changed)
    }

    @Test("many changes at once are placed with one sort; unchecked members stay")
    func bulk() {
        var state = State(order: QueryOrder(keys: [.descending(\.name)]))
        var stores: [Int: Held] = [:]
        let rows = (0..<100).map { Row(id: $0, name: "n\($0 % 10)") }
        _ = state.apply(read(rows, checked: nil, stores: &stores), subscriptions: subscriptions(Array(0..<100)))
        let renamed = (0..<50).map { Row(id: $0, name: "z\($0)") }
        _ = state.apply(read(renamed, checked: Array(0..<50), stores: &stores), subscriptions: [:])
        #expect(state.elements.count == 100)
        #expect(state.elements.elements == state.elements.elements.sorted { QueryOrder(keys: [.descending(\.name)]).precedes($0, $1) })
    }

    @Test("an edit of the list hands changed elements to their stores; adding, removing or moving is reported and undone")
    func edits() {
        var state = State(order: QueryOrder(keys: [.ascending(\.name)]))
        var stores: [Int: Held] = [:]
        _ = state.apply(read([Row(id: 1, name: "Ada"), Row(id: 2, name: "Grace")], checked: nil, stores: &stores), subscriptions: subscriptions([1, 2]))
        var edited = state.elements
        edited[id: 2]?.name = "Aaron"
        let (changed, restored) = state.edit(to: edited)
        #expect(changed.map(\.new) == [Row(id: 2, name: "Aaron")] && !restored)
        #expect(state.elements.ids.elements == [2, 1])  // moved at once
        var shrunk = state.elements
        shrunk.remove(id: 1)
        shrunk.append(Row(id: 9, name: "Nobody"))
        #expect(state.edit(to: shrunk).restored)
        #expect(state.elements.ids.elements == [2, 1])
        var swapped = state.elements
        swapped.swapAt(0, 1)
        #expect(state.edit(to: swapped).restored)
        #expect(state.elements.ids.elements == [2, 1])
        var renamedAndMoved = state.elements                    // moved to where the order puts it
        renamedAndMoved[id: 2]?.name = "Zed"
        renamedAndMoved.swapAt(0, 1)
        #expect(!state.edit(to: renamedAndMoved).restored)
        #expect(state.elements.ids.elements == [1, 2])
    }

    @Test("a read placing many rows at once leaves the list as re-running the query would: the members, in order", .shrinking)
    func placesLikeARerun() async {
        // Rows 0..<n with these names; then each step reads row (id 0..<60) with this name
        // (-1: checked, no longer matching). Up to 32 changes are placed one by one, more at once.
        let steps = zip(Gen.int(in: 0...59), Gen.int(in: -1...5)).array(of: 1...90)
        await propertyCheck(count: 500, input: Gen.int(in: 0...5).array(of: 0...60), steps) { initial, steps in
            let order = QueryOrder<Row>(keys: [.ascending(\.name)])
            var state = State(order: order)
            var stores: [Int: Held] = [:]
            var expected: [Int: Row] = [:]
            for (id, name) in initial.enumerated() { expected[id] = Row(id: id, name: "n\(name)") }
            _ = state.apply(read(Array(expected.values), checked: nil, stores: &stores), subscriptions: subscriptions(Array(expected.keys)))
            var latest: [Int: Int] = [:]
            for (id, name) in steps { latest[id] = name }
            var matching: [Row] = []
            for (id, name) in latest {
                if name < 0 { expected[id] = nil } else { expected[id] = Row(id: id, name: "n\(name)"); matching.append(expected[id]!) }
            }
            let fresh = matching.map(\.id).filter { state.members[$0] == nil }
            _ = state.apply(read(matching, checked: Array(latest.keys), stores: &stores), subscriptions: subscriptions(fresh))
            #expect(state.elements.elements == expected.values.sorted(by: order.precedes))
        }
    }

    @Test("many rows changed in place, still in order, keep their places and stay found by id")
    func bulkInPlace() {
        let order = QueryOrder<Row>(keys: [.ascending(\.name)])
        var state = State(order: order)
        var stores: [Int: Held] = [:]
        let rows = (0..<100).map { Row(id: $0, name: "n\(1000 + $0 * 2)") }
        _ = state.apply(read(rows, checked: nil, stores: &stores), subscriptions: subscriptions(Array(0..<100)))
        // 50 members renamed, each still between its neighbours: more than 32, so placed at once.
        let renamed = stride(from: 0, to: 100, by: 2).map { Row(id: $0, name: "n\(1001 + $0 * 2)") }
        #expect(state.apply(read(renamed, checked: renamed.map(\.id), stores: &stores), subscriptions: [:]).changed)
        var expected = rows
        for row in renamed { expected[row.id] = row }
        #expect(state.elements.elements == expected)
        #expect(expected.allSatisfy { state.elements[id: $0.id] == $0 })
    }
}
