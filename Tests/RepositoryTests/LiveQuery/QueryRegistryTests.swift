import PropertyBased
@testable import Repository
import Testing

/// The registry of live queries on its own, with no database: routers kept once per record type
/// and for as long as the repository lives, other queries for as long as someone holds them.
@Suite("Query registry: routers and followed queries")
struct QueryRegistryTests {
    /// A query that only names itself: the registry holds and lists queries, it never calls them.
    final class NamedQuery: AnyLiveQuery {
        let tableName: String
        init(_ name: String) { tableName = name }
        func follows(_ table: String) -> Bool { table == tableName }
        func changed(_ changes: [Change]) {}
        func rerun() {}
    }

    /// Distinct identities standing for record types and store types.
    final class Tag: Sendable {}

    @Test("one router per record type: the first kept wins a race, and routes rows to its stores' type")
    func routerPerType() {
        var registry = QueryRegistry()
        let (people, pets, stores) = (Tag(), Tag(), Tag())
        let first = NamedQuery("people"), raced = NamedQuery("people (raced)"), other = NamedQuery("pets")
        #expect(registry.router(for: ObjectIdentifier(people)) == nil)
        #expect(registry.keep(router: first, for: ObjectIdentifier(people), routesRowsTo: ObjectIdentifier(stores)) === first)
        #expect(registry.keep(router: raced, for: ObjectIdentifier(people), routesRowsTo: ObjectIdentifier(stores)) === first)
        #expect(registry.keep(router: other, for: ObjectIdentifier(pets), routesRowsTo: ObjectIdentifier(stores)) === other)
        #expect(registry.router(for: ObjectIdentifier(people)) === first)
        let live = registry.live()
        #expect(live.map(\.query.tableName) == ["people", "pets"], "the raced router is not listed")
        #expect(live.allSatisfy { $0.routesRowsTo == ObjectIdentifier(stores) })
    }

    @Test("random sequences of adding, keeping and releasing: live() lists exactly the held queries and routers, in order, and drops the rest", .shrinking)
    func randomSequences() async {
        // Each step: what happens (0 a query is added, 1 a router is kept, 2 a held query is released) and to which (0–3).
        await propertyCheck(count: 500, input: zip(Gen.int(in: 0...2), Gen.int(in: 0...3)).array(of: 0...24)) { steps in
            var registry = QueryRegistry()
            let types = (0..<4).map { _ in Tag() }
            var held: [NamedQuery] = []
            var routers: [Int: NamedQuery] = [:]
            // Every query listed at some point, by name, as it arrived (a released query's
            // address may be reused: names tell them apart).
            var arrived: [String] = []
            for (step, (action, which)) in steps.enumerated() {
                switch action {
                case 0:
                    let query = NamedQuery("query \(step)")
                    registry.add(query)
                    held.append(query)
                    arrived.append(query.tableName)
                case 1:
                    let fresh = NamedQuery("router \(step)")
                    let kept = registry.keep(router: fresh, for: ObjectIdentifier(types[which]), routesRowsTo: ObjectIdentifier(types[which]))
                    #expect(kept === (routers[which] ?? fresh))
                    if routers[which] == nil {
                        routers[which] = fresh
                        arrived.append(fresh.tableName)
                    }
                default:
                    if !held.isEmpty { held.remove(at: which % held.count) }
                }
                // Alive: the queries the test holds, and every router (the registry keeps those).
                let alive = Set(held.map(\.tableName) + routers.values.map(\.tableName))
                let listed = registry.live()
                #expect(listed.map(\.query.tableName) == arrived.filter(alive.contains))
                #expect(listed.allSatisfy { ($0.routesRowsTo != nil) == $0.query.tableName.hasPrefix("router") })
                #expect(registry.count == listed.count, "live() drops the released ones")
            }
        }
    }
}
