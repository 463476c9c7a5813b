import CoreMetrics
import Foundation
import Logging
@testable import Repository
import ServiceLifecycle
import Testing

/// The package in a Swift server: a Service with graceful shutdown, an injected logger,
/// metrics, and an error stream every subscriber can read.
@Suite("In a server")
struct ServiceTests {
    @Test("SIGTERM to a ServiceGroup with 100 unsaved edits pending, its feed cut before: all are committed before it stops, and the re-reads the pool's close stops are not warned about")
    func gracefulShutdownFlushes() async throws {
        let database = try await makeContactsDatabase()
        try await database.query("INSERT INTO contacts (id, name) SELECT n, 'person ' || n FROM generate_series(4, 100) n")
        let url = try await TestServer.connectionString(database: database.name())
        let locker = Database(database.configuration, maximumConnections: 1)
        let lines = Recorder<String>()
        try await locker.transaction { connection in
            // The writes wait behind this lock, so they are still pending at SIGTERM.
            try await connection.query("LOCK TABLE contacts IN SHARE MODE")
            let worker = try ChildProcess(ConvergenceRun.worker, ["serve", "100"],
                                          environment: ProcessInfo.processInfo.environment.merging(["DATABASE_URL": url]) { $1 })
            worker.readOutputLines { lines.append($0) }
            #expect(try await eventually { lines.all.contains("edited") })
            // Its feed cut: every handle's row is read again, queued behind the writes until shutdown.
            try await TestServer.admin.value.query(
                "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE '% (change feed)'",
                [database.name()])
            #expect(try await eventually { lines.all.contains { $0.contains("change feed listening again") } })
            kill(worker.pid, SIGTERM)
            #expect(try await eventually { lines.all.contains { $0.contains("flushing pending writes") } })
            #expect(!lines.all.contains("stopped"))  // still waiting for its writes
            try await connection.query("COMMIT")
            try await connection.query("BEGIN")      // the transaction {} commits an empty one
            #expect(try await eventually(timeout: .seconds(300)) { lines.all.contains("stopped") })
            #expect(await worker.exit() == 0)
        }
        let edited = try await database.query("SELECT count(*) FROM contacts WHERE name LIKE 'edited %'")[0].decode(Int.self, at: 0)
        #expect(edited == 100, "what the worker logged above debug: \(lines.all.filter { $0.hasPrefix("log") && !$0.hasPrefix("log debug") })")
        // The reads still queued when the pool closed are not warned about.
        #expect(!lines.all.contains { $0.contains("re-reading changed rows failed") })
        locker.close()
    }

    @Test("the injected logger is used, and a healthy run logs nothing at .warning or above")
    func injectedLogger() async throws {
        let records = Recorder<(level: Logger.Level, message: String)>()
        var logger = Logger(label: "test") { _ in RecordingLogHandler(records: records) }
        logger.logLevel = .trace
        let plain = try await makeContactsDatabase()
        let database = Database(plain.configuration, logger: logger)
        let repository = LiveRepository(database)
        let ada = try await repository.read(Contact.self, id: 1)
        ada[\.name].value = "Ada L."
        try await ada.save()
        try await psql("UPDATE contacts SET email = 'ada@example.com' WHERE id = 1", database: database)
        #expect(try await eventually { ada.value.email == "ada@example.com" })
        try await database.query("SELECT pg_notify('live_changes', 'not an announcement')")
        #expect(try await eventually { records.all.contains { $0.message.contains("not a change announcement") } })
        await repository.shutdown()
        #expect(records.all.contains { $0.message == "listening" })
        #expect(records.all.allSatisfy { $0.level < .warning }, "\(records.all.filter { $0.level >= .warning })")
    }

    @Test("a metrics backend sees the pool, statements, feed and live values move")
    func metrics() async throws {
        let backend = RecordingMetrics()
        let plain = try await makeContactsDatabase()
        let database = Database(plain.configuration, metricsFactory: backend)
        let repository = LiveRepository(database)
        let grace = try await repository.read(Contact.self, id: 2)
        grace[\.name].value = "Grace H."
        try await grace.save()
        try await psql("UPDATE contacts SET name = 'Amazing Grace' WHERE id = 2", database: database)
        #expect(try await eventually { grace.value.name == "Amazing Grace" })
        _ = try? await database.query("SELECT 1/0")
        #expect(try await eventually { backend.values("live_feed_changes").reduce(0, +) >= 1 })
        for label in ["postgres_pool_connections", "postgres_statement_duration", "postgres_pool_wait_duration",
                      "live_feed_lag", "live_values", "live_rows_reread", "live_write_duration"] {
            #expect(!backend.values(label).isEmpty, "\(label) never recorded")
        }
        #expect(backend.values("postgres_statement_errors", dimension: ("sqlstate_class", "22")) == [1])
        await repository.shutdown()
    }

    @Test("through logical replication, live_feed_lag is recorded from the commit's time")
    func replicationMetrics() async throws {
        let backend = RecordingMetrics()
        let plain = try await TestServer.makeDatabase(replication: true)  // on the server that decodes logically
        try await plain.query("CREATE TABLE contacts (id bigint PRIMARY KEY, name text NOT NULL, email text UNIQUE)")
        try await plain.query("INSERT INTO contacts (id, name) VALUES (2, 'Grace')")
        try await LiveSchema.publish("contacts", on: plain)
        plain.close()
        let database = Database(plain.configuration, metricsFactory: backend)
        let repository = LiveRepository(database, changes: .logicalReplication)
        let grace = try await repository.read(Contact.self, id: 2)
        try await psql("UPDATE contacts SET name = 'Amazing Grace' WHERE id = 2", database: database)
        #expect(try await eventually { grace.value.name == "Amazing Grace" })
        #expect(try await eventually { !backend.values("live_feed_lag").isEmpty })
        // Nanoseconds from the commit to applied: positive, and under a minute (both clocks are this machine's).
        #expect(backend.values("live_feed_lag").allSatisfy { $0 >= 0 && $0 < 60e9 }, "\(backend.values("live_feed_lag"))")
        await repository.shutdown()
    }

    @Test("every subscriber of errors gets every error; one that does not read holds at most 1,000")
    func errorsForEverySubscriber() async throws {
        let database = try await makeContactsDatabase()
        let repository = LiveRepository(database)
        let first = Recorder<String>(), second = Recorder<String>()
        let readers = [repository.errors, repository.errors].enumerated().map { index, stream in
            Task { for await error in stream { (index == 0 ? first : second).append("\(error)") } }
        }
        let people = try await repository.readAll(Contact.self)
        for _ in 0..<3 { people.value.removeAll() }   // each undone and reported
        #expect(try await eventually { first.count == 3 && second.count == 3 })
        readers.forEach { $0.cancel() }
        #expect(repository.droppedErrors == 0)
        let idle = repository.errors  // never read
        for _ in 0..<1_100 { repository.report(.membershipIsReadOnly(table: "public.contacts")) }
        #expect(repository.droppedErrors == 100)  // the idle subscriber keeps the newest 1,000
        var kept = 0
        repository.close()
        ErrorBroadcastFinisher.finish(repository)
        for await _ in idle { kept += 1 }
        #expect(kept == 1_000)
    }
}

/// Keeps every log record.
struct RecordingLogHandler: LogHandler {
    let records: Recorder<(level: Logger.Level, message: String)>
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        records.append((event.level, event.message.description))
    }
}

/// A metrics backend that keeps every recorded value by label and dimensions.
final class RecordingMetrics: MetricsFactory, Sendable {
    private let recorded = Recorder<(label: String, dimensions: [(String, String)], value: Double)>()

    func values(_ label: String, dimension: (String, String)? = nil) -> [Double] {
        recorded.all.filter { entry in
            entry.label == label && (dimension.map { wanted in entry.dimensions.contains { $0 == wanted } } ?? true)
        }.map(\.value)
    }

    private final class Handler: CounterHandler, FloatingPointCounterHandler, RecorderHandler, TimerHandler, MeterHandler, @unchecked Sendable {
        let label: String
        let dimensions: [(String, String)]
        let record: @Sendable (Double) -> Void
        init(_ label: String, _ dimensions: [(String, String)], _ recorded: Recorder<(label: String, dimensions: [(String, String)], value: Double)>) {
            self.label = label
            self.dimensions = dimensions
            let dimensionsCopy = dimensions
            record = { recorded.append((label, dimensionsCopy, $0)) }
        }
        func increment(by amount: Int64) { record(Double(amount)) }
        func increment(by amount: Double) { record(amount) }
        func reset() {}
        func record(_ value: Int64) { record(Double(value)) }
        func record(_ value: Double) { record(value) }
        func recordNanoseconds(_ duration: Int64) { record(Double(duration)) }
        func set(_ value: Int64) { record(Double(value)) }
        func set(_ value: Double) { record(value) }
        func decrement(by amount: Double) { record(-amount) }
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler { Handler(label, dimensions, recorded) }
    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler { Handler(label, dimensions, recorded) }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler { Handler(label, dimensions, recorded) }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler { Handler(label, dimensions, recorded) }
    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler { Handler(label, dimensions, recorded) }
    func destroyCounter(_ handler: any CounterHandler) {}
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {}
    func destroyRecorder(_ handler: any RecorderHandler) {}
    func destroyTimer(_ handler: any TimerHandler) {}
    func destroyMeter(_ handler: any MeterHandler) {}
}

/// Ends a repository's error streams (as its shutdown does), so a test can read one to the end.
enum ErrorBroadcastFinisher {
    static func finish(_ repository: LiveRepository) { repository.broadcast.finish() }
}
