import Foundation
import Repository
import Testing

/// Two Swift types over one table — a summary for a list and a full record for a detail view,
/// say — each keep a live store of their own, and every one follows the row: writes through the
/// other type, by other processes, key changes.
@Suite("Two record types over one table")
struct TwoTypesOneTableTests {
    struct Pair: Record, Equatable {
        static let tableName = "pairs"
        var id: Int64
        var note: String
        var count: Int64
    }

    struct PairView: Record, Equatable {
        static let tableName = "pairs"
        var id: Int64
        var note: String
    }

    func setUp(_ source: ChangeSource) async throws -> (Database, LiveRepository) {
        let database = try await TestServer.makeDatabase(replication: source != .notifications)
        try await database.query("CREATE TABLE pairs (id bigint PRIMARY KEY, note text NOT NULL, count bigint NOT NULL)")
        try await database.query("INSERT INTO pairs SELECT n, 'n' || n, 0 FROM generate_series(1, 3) n")
        if source == .notifications {
            try await LiveSchema.enable("pairs", on: database)
        } else {
            try await LiveSchema.publish("pairs", on: database)
        }
        return (database, LiveRepository(database, changes: source))
    }

    @Test("handles of both types on one row follow each other's writes and psql's, and each one's save succeeds",
          arguments: [ChangeSource.notifications, .logicalReplication])
    func handles(through source: ChangeSource) async throws {
        let (database, repository) = try await setUp(source)
        defer { repository.close() }
        let errors = ErrorLog(repository)
        let full = try await repository.read(Pair.self, id: 1)
        let view = try await repository.read(PairView.self, id: 1)
        view[\.note].value = "via view"
        try await view.save()
        #expect(try await eventually { full.value.note == "via view" })
        full[\.note].value = "via full"
        full[\.count].value = 5
        try await full.save()
        #expect(try await eventually { view.value.note == "via full" })
        try await psql("UPDATE pairs SET note = 'psql' WHERE id = 1", database: database)
        #expect(try await eventually { full.value.note == "psql" && view.value.note == "psql" })
        try await psql("UPDATE pairs SET id = 10 WHERE id = 1", database: database)
        #expect(try await eventually { full.liveState == .deleted && view.liveState == .deleted })
        try await psql("UPDATE pairs SET id = 1, note = 'back' WHERE id = 10", database: database)
        #expect(try await eventually { full.value.note == "back" && view.value.note == "back" && full.liveState == .live })
        // Reading again shares each type's own store.
        #expect(try await repository.read(Pair.self, id: 1).value == full.value)
        #expect(errors.errors.all.isEmpty, "\(errors.errors.all)")
    }

    @Test("a live list of one type and a detail handle of the other: each follows the other's writes and psql's",
          arguments: [ChangeSource.notifications, .logicalReplication])
    func listAndDetail(through source: ChangeSource) async throws {
        let (database, repository) = try await setUp(source)
        defer { repository.close() }
        let errors = ErrorLog(repository)
        let list = try await repository.readAll(PairView.self, orderBy: [.ascending(\.id)])
        let detail = try await repository.read(Pair.self, id: 2)
        try await psql("UPDATE pairs SET note = 'psql' WHERE id = 2", database: database)
        #expect(try await eventually { detail.value.note == "psql" && list.value[id: 2]?.note == "psql" })
        detail[\.note].value = "detail"
        try await detail.save()
        #expect(try await eventually { list.value[id: 2]?.note == "detail" })
        list[id: 2][\.note].value = "list"
        try await list.save()
        #expect(try await eventually { detail.value.note == "list" })
        try await psql("UPDATE pairs SET note = note || '!'", database: database)
        #expect(try await eventually { detail.value.note == "list!" && list.value.map(\.note) == ["n1!", "list!", "n3!"] })
        #expect(errors.errors.all.isEmpty, "\(errors.errors.all)")
    }
}
