import Foundation
@testable import Repository
import Testing

/// A table whose changes stop being announced while its live values are held — its triggers
/// dropped, or taken out of the publication — is reported, and its values are read again once
/// it is announced again.
@Suite("Tables that stop being followed")
struct FollowWatchTests {
    @Test("the watch's transitions: a table is reported once when it stops being announced, and its return asks for a re-read")
    func transitions() {
        var watch = FollowWatch()
        let (first, second) = (watch.watch("\"public\".\"a\""), watch.watch("\"public\".\"b\""))
        #expect(first && !second, "the checking task starts once")
        #expect(watch.tables.count == 2)
        var outcome = watch.checked([("public.a", "public.a", nil), ("public.b", "public.b", nil)])
        #expect(outcome.stopped.isEmpty && !outcome.resumed)
        outcome = watch.checked([("public.a", "public.a", .missing), ("public.b", "public.b", nil)])
        #expect(outcome.stopped.map(\.name) == ["public.a"] && !outcome.resumed)
        outcome = watch.checked([("public.a", "public.a", .missing), ("public.b", "public.b", .rowFilter)])
        #expect(outcome.stopped.map(\.name) == ["public.b"] && !outcome.resumed, "each table is reported once")
        outcome = watch.checked([("public.a", "public.a", nil), ("public.b", "public.b", .rowFilter)])
        #expect(outcome.stopped.isEmpty && outcome.resumed)
        outcome = watch.checked([("public.a", "public.a", nil), ("public.b", "public.b", nil)])
        #expect(outcome.stopped.isEmpty && outcome.resumed)
    }

    struct Gone: Record, Equatable {
        static let tableName = "gone"
        var id: Int64
        var title: String
    }

    struct Doc: Record, Equatable {
        static let tableName = "docs"
        var id: Int64
        var title: String
    }

    @Test("triggers disabled, the table taken out of the publication, or dropped, while a handle is live: reported on errors with the remedy; once announced again, the handle catches up",
          arguments: [ChangeSource.notifications, .logicalReplication])
    func stopsAndReturns(through source: ChangeSource) async throws {
        let database = try await TestServer.makeDatabase(replication: source != .notifications)
        defer { database.close() }
        try await database.query("CREATE TABLE docs (id bigint PRIMARY KEY, title text NOT NULL)")
        try await database.query("INSERT INTO docs VALUES (1, 'first')")
        let (stop, resume) = source == .notifications
            ? ({ try await LiveSchema.disable("docs", on: database) }, { try await LiveSchema.enable("docs", on: database) })
            : ({ try await psql("ALTER PUBLICATION live_changes DROP TABLE docs", database: database) },
               { try await psql("ALTER PUBLICATION live_changes ADD TABLE docs", database: database) })
        if source == .notifications { try await resume() } else { try await LiveSchema.publish("docs", on: database) }
        let repository = LiveRepository(database, changes: source)
        defer { repository.close() }
        repository.followed.withLock { $0.interval = .milliseconds(100) }
        let errors = ErrorLog(repository)
        let doc = try await repository.read(Doc.self, id: 1)
        try await psql("UPDATE docs SET title = 'followed'", database: database)
        #expect(try await eventually { doc.value.title == "followed" })

        try await stop()
        #expect(try await eventually { errors.errors.all.contains { $0.contains("changes of this table no longer reach this repository") } }, "\(errors.errors.all)")
        #expect(errors.errors.all.contains { $0.contains(source == .notifications ? "enable with LiveSchema.enable" : "add with LiveSchema.publish") },
                "\(errors.errors.all)")
        try await psql("UPDATE docs SET title = 'while not followed'", database: database)
        try await resume()
        #expect(try await eventually { doc.value.title == "while not followed" })
        try await psql("UPDATE docs SET title = 'followed again'", database: database)
        #expect(try await eventually { doc.value.title == "followed again" })
        #expect(errors.errors.all.filter { $0.contains("no longer reach") }.count == 1, "\(errors.errors.all)")

        // Another table held live is dropped: the rest are still checked.
        try await database.query("CREATE TABLE gone (id bigint PRIMARY KEY, title text NOT NULL)")
        try await database.query("INSERT INTO gone VALUES (1, 'x')")
        if source == .notifications { try await LiveSchema.enable("gone", on: database) } else { try await LiveSchema.publish("gone", on: database) }
        let gone = try await repository.read(Gone.self, id: 1)
        try await psql("DROP TABLE gone", database: database)
        #expect(try await eventually { errors.errors.all.contains { $0.contains("public.gone, which is gone (dropped or renamed)") } }, "\(errors.errors.all)")
        try await stop()
        #expect(try await eventually { errors.errors.all.filter { $0.contains("no longer reach") }.count == 3 }, "\(errors.errors.all)")
        // Made again, and announced: the handle follows the new table's row.
        try await database.query("CREATE TABLE gone (id bigint PRIMARY KEY, title text NOT NULL)")
        try await database.query("INSERT INTO gone VALUES (1, 'made again')")
        if source == .notifications { try await LiveSchema.enable("gone", on: database) } else { try await LiveSchema.publish("gone", on: database) }
        #expect(try await eventually { gone.value.title == "made again" }, "\(gone.value)")
    }
}
