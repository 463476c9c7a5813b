import Hummingbird
import IdentifiedCollections
import Repository

/// One row of `GET /people/address-counts`: a person and how many addresses they have.
struct AddressCount: Codable, Equatable, Sendable, Identifiable {
    var id: Int64
    var name: String
    var addresses: Int
}

/// `GET /people/address-counts` and its events: a live join (`readAll(_:sql:)`), run again
/// when `people` or `addresses` is announced, and streamed whole whenever its result differs.
/// Names sort by their bytes (`COLLATE "C"`), as `GET /people`'s live query sorts them, whatever
/// the database's collation: the two routes list people in the same order.
struct AddressCountRoutes: Sendable {
    static let sql = """
        SELECT p.id, p.name, count(a.id)::int AS addresses FROM people p
        LEFT JOIN addresses a ON a.person_id = p.id GROUP BY p.id ORDER BY p.name COLLATE "C", p.id
        """

    let counts: Derived<IdentifiedArrayOf<AddressCount>>
    let heartbeat: Duration

    init(repository: LiveRepository, heartbeat: Duration) async throws {
        counts = try await repository.readAll(AddressCount.self, sql: Self.sql)
        self.heartbeat = heartbeat
    }

    func add(to router: Router<BasicRequestContext>) {
        router.get("people/address-counts") { _, _ in try Response.json(counts.value.elements, status: .ok) }
        router.get("people/address-counts/events") { request, _ in
            let events = counts.values.cancelOnGracefulShutdown().map { list in
                EventStream.event("counts", data: (try? Response.jsonText(Counts(people: list.elements))) ?? "{}")
            }
            return EventStream.response(to: request, events, heartbeat: heartbeat)
        }
    }

    /// A `counts` event's data: everyone, in order, with their address counts.
    private struct Counts: Encodable {
        var people: [AddressCount]
    }
}
