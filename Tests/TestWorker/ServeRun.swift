// `test-worker serve <rows>` (DATABASE_URL: the database): reads rows 1…<rows> of `contacts`,
// renames each without saving, says `edited`, then runs the database and the repository in a
// ServiceGroup until SIGTERM; says `stopped` once the group has shut down. Logs go to standard
// output (`log <level> <message>`).
import Foundation
import Logging
import Repository
import ServiceLifecycle

struct ServedContact: Record, Equatable {
    static let tableName = "contacts"
    var id: Int64
    var name: String
}

/// Holds pending edits, then shuts down gracefully on SIGTERM.
func serve(_ arguments: [String]) async throws {
    guard arguments.count == 1, let rows = Int64(arguments[0]) else { throw Usage("serve <rows>") }
    var logger = Logger(label: "test-worker") { _ in LineLogHandler() }
    logger.logLevel = .debug
    let database = Database(try .environment(), maximumConnections: 4, logger: logger)
    let repository = LiveRepository(database)
    // A loaded machine may take longer than the default 10 s; the test asks for completeness.
    repository.shutdownTimeout = .seconds(300)
    var handles: [Var<ServedContact>] = []
    for id in 1...rows { handles.append(try await repository.read(ServedContact.self, id: id)) }
    for handle in handles { handle[\.name].value = "edited \(handle.value.id)" }
    // Says `edited` once the group runs, so that its SIGTERM handler is in place.
    let group = ServiceGroup(services: [database, repository, Announce(line: "edited")], gracefulShutdownSignals: [.sigterm], logger: logger)
    try await group.run()
    withExtendedLifetime(handles) {}
    say("stopped")
}

/// Prints each log record as one line on standard output.
struct LineLogHandler: LogHandler {
    var logLevel: Logger.Level = .debug
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let fields = metadata.merging(event.metadata ?? [:]) { $1 }.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }
        say("log \(event.level) \(event.message)\(fields.joined())")
    }
}

/// A service that says a line once it runs, and runs until shutdown.
struct Announce: Service {
    let line: String
    func run() async throws {
        say(line)
        try? await gracefulShutdown()
    }
}
