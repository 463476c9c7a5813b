import Foundation
import PropertyBased
@testable import Repository
import Testing

/// The router's state without a database: a changed row reaches every query it enters or
/// leaves, with the right answer, and the queries it does not concern are not visited.
@Suite("Query routes")
struct QueryRoutesTests {
    /// A row of a table `(a bigint, b bigint NULL, t text)`.
    struct Row: ConditionRow {
        var a: Int64, b: Int64?, t: String
        var unreadable: Set<String> { [] }
        func value(of column: String) -> ConditionValue? {
            switch column {
            case "a": .integer(a)
            case "b": b.map { .integer($0) }
            default: .text(Array(t.utf8))
            }
        }
    }

    static let columns: [String: CompiledCondition.Column] = [
        "a": .init(kind: .integer, bytewiseOrder: true), "b": .init(kind: .integer, bytewiseOrder: true),
        "t": .init(kind: .text, bytewiseOrder: true),
    ]

    /// Condition templates over parameter `p`, and what each means, written out in Swift.
    static let templates: [(sql: String, parameters: @Sendable (Int64) -> [SQLValue], means: @Sendable (Row, Int64) -> Bool)] = [
        ("a = $1", { [.text("\($0)")] }, { row, p in row.a == p }),
        ("a IN ($1, $2)", { [.text("\($0)"), .text("\($0 + 1)")] }, { row, p in row.a == p || row.a == p + 1 }),
        ("a = $1 AND b > $1", { [.text("\($0)")] }, { row, p in row.a == p && (row.b.map { $0 > p } ?? false) }),
        ("b IS NULL", { _ in [] }, { row, _ in row.b == nil }),
        ("a BETWEEN $1 AND $2 OR t LIKE 'x%'", { [.text("\($0)"), .text("\($0 + 2)")] }, { row, p in (p...p + 2).contains(row.a) || row.t.hasPrefix("x") }),
        ("NOT (b = $1)", { [.text("\($0)")] }, { row, p in row.b.map { $0 != p } ?? false }),
        ("abs(a) = $1", { [.text("\($0)")] }, { row, p in abs(row.a) == p }),  // a function: the server's to check
        ("t = $1", { [.text("x\($0)")] }, { row, p in row.t == "x\(p)" }),
    ]

    final class Query {
        let template: Int, p: Int64
        init(template: Int, p: Int64) { (self.template, self.p) = (template, p) }
        var id: ObjectIdentifier { ObjectIdentifier(self) }
        func means(_ row: Row) -> Bool { QueryRoutesTests.templates[template].means(row, p) }
    }

    @Test("random queries and row changes: each change reaches every query it enters or leaves, with the answer the condition gives; an indexed query is visited only for its value", .shrinking)
    func routesLikeTheConditions() async {
        let queries = zip(Gen.int(in: 0...7), Gen.int(in: -2...4)).array(of: 1...40)
        // (what: 0–6 update, 7–8 delete, 9 drop a query; row id; a; b (-1: NULL); t)
        let steps = zip(Gen.int(in: 0...9), Gen.int(in: 0...11), Gen.int(in: -3...4), Gen.int(in: -1...4), Gen.int(in: 0...3)).array(of: 1...80)
        await propertyCheck(count: 300, input: queries, steps) { queries, steps in
            var routes = QueryRoutes<Int>()
            var live = queries.map { Query(template: $0, p: Int64($1)) }
            for query in live {
                let template = Self.templates[query.template]
                let check = CompiledCondition.compile(template.sql, parameters: template.parameters(query.p), columns: Self.columns)
                _ = routes.add(query.id, check.map { .here($0) } ?? .server)
                #expect((check == nil) == (query.template == 6), "\(template.sql) is evaluated here unless it calls a function")
            }
            var held: [ObjectIdentifier: Set<Int>] = [:]
            for (what, id, a, b, t) in steps {
                if what == 9 {
                    guard !live.isEmpty else { continue }
                    let gone = live.remove(at: id % live.count)
                    routes.remove(gone.id)
                    held[gone.id] = nil
                    continue
                }
                var row: Row? = what >= 7 ? nil : Row(a: Int64(a), b: b < 0 ? nil : Int64(b), t: ["x1", "x2", "y1", ""][t])
                let server = Dictionary(uniqueKeysWithValues: live.filter { $0.template == 6 }.map { ($0.id, row.map($0.means) ?? false) })
                let verdicts = routes.verdicts(for: id, row: &row, server: server)
                let answered = Dictionary(verdicts.map { ($0.query, $0.member) }, uniquingKeysWith: { _, _ in
                    Issue.record("a query answered twice for one row")
                    return nil
                })
                for query in live {
                    let member = row.map(query.means) ?? false
                    let holds = held[query.id, default: []].contains(id)
                    if member || holds {
                        #expect(answered[query.id] == .some(member), "\(Self.templates[query.template].sql), p = \(query.p), row \(id): \(String(describing: row))")
                    } else if let answer = answered[query.id] {
                        #expect(answer == false)
                        // An indexed query is visited only for rows holding the value it is indexed by.
                        let indexedBy: [Int: (Row) -> Bool] = [
                            0: { $0.a == query.p }, 1: { [query.p, query.p + 1].contains($0.a) }, 2: { $0.a == query.p }, 7: { $0.t == "x\(query.p)" },
                        ]
                        #expect(indexedBy[query.template].map { row.map($0) == true } ?? true, "an indexed query was visited for a row without its value")
                    }
                }
                #expect(Set(answered.keys).isSubset(of: Set(live.map(\.id))), "a dropped query was answered")
                for (query, member) in verdicts {
                    routes.record(query, checked: [id], matching: member == true ? [id] : [])
                    if member == true { held[query, default: []].insert(id) } else { held[query]?.remove(id) }
                }
            }
        }
    }

    @Test("a query whose condition reads a column that could not be read is undecided, not answered")
    func unreadableColumn() {
        struct Unreadable: ConditionRow {
            var unreadable: Set<String> = []
            mutating func value(of column: String) -> ConditionValue? {
                if column == "b" { unreadable.insert("b"); return nil }
                return .integer(1)
            }
        }
        var routes = QueryRoutes<Int>()
        let onB = Query(template: 5, p: 1), onA = Query(template: 0, p: 1)
        for query in [onB, onA] {
            let template = Self.templates[query.template]
            _ = routes.add(query.id, .here(CompiledCondition.compile(template.sql, parameters: template.parameters(query.p), columns: Self.columns)!))
        }
        var row: Unreadable? = Unreadable()
        let verdicts = Dictionary(uniqueKeysWithValues: routes.verdicts(for: 7, row: &row, server: [:]).map { ($0.query, $0.member) })
        #expect(verdicts[onA.id] == .some(true))
        #expect(verdicts[onB.id] == .some(nil))
    }

    @Test("a pending row keeps its latest change that carried the row; a later one that did not drops it, and the row is read; after whole runs none is used")
    func streamedRows() {
        let streamed = { (id: Int, version: Int64) in
            (id: id, change: Optional(Change(table: "t", operation: .update, key: .integer(Int64(id)), version: version,
                                             row: StreamedRow(columns: [], cells: [], version: version, epoch: 1))))
        }
        var routes = QueryRoutes<Int>()
        let starts = [routes.announce([streamed(1, 5), streamed(2, 6), (id: 3, change: nil)]),
                      routes.announce([streamed(1, 7), streamed(3, 8)]),
                      routes.announce([2])]
        #expect(starts == [true, false, false])
        let next = routes.next()
        #expect(next?.keys.sorted() == [1, 2, 3])
        #expect(next?.streamed.mapValues(\.version) == [1: 7, 3: 8])
        let drained = routes.next()
        #expect(drained == nil)
        // A whole run reads the table as it is: an older streamed row must not land on top of it.
        let query = ObjectIdentifier(QueryRoutesTests.self)
        _ = routes.add(query, .here(.always))
        _ = routes.announce([streamed(4, 9)])
        let afterRun = routes.next()
        #expect(afterRun?.fullRuns == [query] && afterRun?.keys == [4] && afterRun?.streamed.isEmpty == true)
        _ = routes.next()
        let restarts = routes.announce([streamed(4, 10)])
        #expect(restarts)
        let again = routes.next()
        #expect(again?.streamed.mapValues(\.version) == [4: 10])
    }
}

extension QueryRoutesTests {
    @Test("a query whose whole run failed runs whole again with the table's next change, once; a removed one does not")
    func failedRunRetried() {
        var routes = QueryRoutes<Int>()
        let failing = Query(template: 6, p: 1), removed = Query(template: 6, p: 2)
        _ = routes.add(failing.id, .server)
        _ = routes.add(removed.id, .server)
        #expect(Set(routes.next()?.fullRuns ?? []) == [failing.id, removed.id])
        routes.runFailed(failing.id)
        routes.runFailed(removed.id)
        routes.remove(removed.id)
        #expect(routes.next() == nil, "a failure alone starts no work")
        let started = routes.announce([7])
        #expect(started)
        let retried = routes.next()
        #expect(retried?.fullRuns == [failing.id] && retried?.keys == [7])
        #expect(routes.next() == nil)
        _ = routes.announce([8])
        let after = routes.next()
        #expect(after?.fullRuns == [], "it ran and did not fail again")
    }
}
