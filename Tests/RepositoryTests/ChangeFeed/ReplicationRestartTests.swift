import Foundation
@testable import Repository
import Testing

/// README: "after a server restart the slot is still there and resumes too".
@Suite("Logical replication across a server restart")
struct ReplicationRestartTests {
    struct Note: Record, Equatable {
        static let tableName = "notes"
        var id: Int64
        var body: String
    }

    @Test("after a server restart (fast shutdown), the feed resumes its slot: a change committed after it arrives from the stream, and no other of 50 live rows is read again; a save and shutdown() after it report nothing")
    func resumeAfterRestart() async throws {
        let directory = FileManager.default.temporaryDirectory.path + "/replication-restart-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await LocalServer.start(.persistent(directory: directory))
        let database = Database(server.configuration, maximumConnections: 2)
        defer { database.close() }
        try await database.query("CREATE TABLE notes (id bigint PRIMARY KEY, body text NOT NULL)")
        try await database.query("INSERT INTO notes (id, body) SELECT i, 'row ' || i FROM generate_series(1, 50) AS i")
        try await LiveSchema.publish("notes", on: database)
        let repository = LiveRepository(database, changes: .logicalReplication)
        let events = Recorder<LiveRecordError>()
        let stream = repository.errors  // subscribed now, not when the task runs
        let watcher = Task { for await error in stream { events.append(error) } }
        defer { watcher.cancel() }
        var handles: [Var<Note>] = []
        for id in 1...50 { handles.append(try await repository.read(Note.self, id: Int64(id))) }
        let list = try await repository.readAll(Note.self, where: "id > $1", parameters: [50], orderBy: [.ascending(\.id)])
        // Streaming, and row 1 holds a version the stream delivered.
        try await database.query("UPDATE notes SET body = 'streamed' WHERE id = 1")
        #expect(try await eventually { handles[0].value.body == "streamed" })
        let slots = "SELECT slot_name FROM pg_replication_slots WHERE database = current_database()"
        let slot = try await database.query(slots).map { try $0.decode(String.self, at: 0) }
        let (rowsBefore, streamedBefore) = repository.reads.withLock { ($0.rows, $0.streamed) }

        try await server.stop()
        let restarted = try await LocalServer.start(.persistent(directory: directory))
        // Until the pool sees the server again.
        #expect(try await eventually { (try? await database.query("UPDATE notes SET body = 'after' WHERE id = 1")) != nil })
        #expect(try await eventually {
            handles[0].value.body == "after" && events.all.contains { if case .changeFeedReconnected = $0 { true } else { false } }
        })
        let (reread, streamed) = repository.reads.withLock { ($0.rows - rowsBefore, $0.streamed - streamedBefore) }
        #expect(reread == 0 && streamed == 1, "after the restart: \(reread) rows read again of 50 live rows, \(streamed) taken from the stream")
        #expect(try await database.query(slots).map { try $0.decode(String.self, at: 0) } == slot, "not the same slot, resumed")
        try await database.query("INSERT INTO notes (id, body) VALUES (51, 'listed')")
        #expect(try await eventually { list.value.count == 1 })
        handles[1].value.body = "saved"
        try await handles[1].save()
        await repository.shutdown()
        let reported = events.all.filter { error in
            switch error {
            case .changeFeedDisconnected, .changeFeedReconnected: false
            default: true
            }
        }
        #expect(reported.isEmpty, "reported after the restart: \(reported)")
        try await restarted.stop()
    }
}
