// LiveServer: the address book over HTTP, live.
//
//   DATABASE_URL=postgres://… PORT=8080 swift run LiveServer
//
//   GET   /                     the address book as a live page (names editable in place)
//   GET   /people               everyone, ordered by name (JSON)
//   GET   /people/events        Server-Sent Events: the whole list, then one event per change
//                               (the people changed, the ids removed); resumes from Last-Event-ID
//   GET   /people/events?prefix=Ad   the same for the client's own live query: the people whose
//                               names start with the prefix, as rows (id, name)
//   GET   /people/address-counts          each person with their number of addresses (a live join)
//   GET   /people/address-counts/events   Server-Sent Events: the whole join, again whenever it differs
//   GET   /people/{id}          one person (JSON), with an ETag from their rows' versions
//   PATCH /people/{id}          {"name": "…"}: written through a live handle; 409 with both
//                               values when another writer changed the name first; 412 with
//                               the current value when If-Match names a version it moved on from
//   GET   /people/{id}/events   Server-Sent Events: the person now, then every change by anyone;
//                               a `deleted` event ends it
//
// Event streams send a comment every HEARTBEAT_SECONDS (15) and end when their client leaves.
// The database, the repository and the HTTP server run in one ServiceGroup: SIGTERM or SIGINT
// stops the server first, then the repository flushes pending writes, then the pool closes —
// 25 s at most, after which what is left is cancelled.
import AddressBookKit
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Repository
import ServiceLifecycle

let environment = ProcessInfo.processInfo.environment
let logger = {
    var logger = Logger(label: "LiveServer")
    logger.logLevel = environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
    return logger
}()

// A start-up failure (no database, a wrong password, a migration that fails) is one line on
// standard error, passwords removed, and exit status 1 — not a crash with a backtrace.
let redactor = SecretRedactor(scanning: CommandLine.arguments, environment: environment)
do {
    let heartbeat = try heartbeatInterval(environment["HEARTBEAT_SECONDS"])
    let port = try listeningPort(environment["PORT"])
    let database = Database(try .environment(), maximumConnections: 8, logger: logger)
    try await AddressBook.migrate(database)
    let book = AddressBook(database)
    let everyone = try await book.people()   // one live query, kept current for GET /people and its events
    let feed = PeopleFeed(everyone)
    let page = try Page()

    let router = Router(options: .autoGenerateHeadEndpoints)   // HEAD answers as GET does, without the body
    router.add(middleware: DatabaseUnavailable())
    router.get("/") { _, _ in page.response() }
    router.get("people") { _, _ in everyone.value.elements }
    router.get("people/events") { request, _ in
        if let prefix = request.uri.queryParameters["prefix"].map(String.init) {
            // This client's own live query; the feed, and with it the query, lives as long as the stream.
            let own = PeopleFeed(try await book.repository.readAll(Person.Row.self, where: "name LIKE $1",
                                                                   parameters: [try likePrefix(prefix)], orderBy: [.ascending(\.name)]))
            let events = own.events(after: nil).map { [own] event in withExtendedLifetime(own) { event } }
            return EventStream.response(to: request, events.cancelOnGracefulShutdown(), heartbeat: heartbeat)
        }
        let lastEventID = request.headers[HTTPField.Name("Last-Event-ID")!] ?? request.uri.queryParameters["since"].map(String.init)
        return EventStream.response(to: request, feed.events(after: lastEventID).cancelOnGracefulShutdown(), heartbeat: heartbeat)
    }
    try await AddressCountRoutes(repository: book.repository, heartbeat: heartbeat).add(to: router)
    PersonRoutes(book: book, heartbeat: heartbeat).add(to: router)

    let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
                          onServerRunning: { _ in logger.info("listening", metadata: ["port": "\(port)"]) }, logger: logger)
    // Shut down in reverse order: the HTTP server (its requests in flight finish first — a PATCH
    // waits for its write, which may wait for a row lock), then the repository (flushing, 10 s at
    // most), then the pool. After 25 s in all, what is left is cancelled: under the 30 s Kubernetes
    // allows between SIGTERM and SIGKILL.
    var configuration = ServiceGroupConfiguration(services: [database, book.repository, app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
    configuration.maximumGracefulShutdownDuration = .seconds(25)
    let services = ServiceGroup(configuration: configuration)
    try await services.run()
} catch {
    let line = startupFailure(error).split(whereSeparator: \.isNewline).joined(separator: " ")
    FileHandle.standardError.write(Data("LiveServer: \(TerminalText.escaped(redactor.redact(line), limit: 2_000))\n".utf8))
    exit(1)
}

/// What stopped the server at start-up, in a sentence: a port another program listens on is
/// named as that, not as the socket call that failed.
func startupFailure(_ error: any Error) -> String {
    if let error = error as? IOError, error.errnoCode == EADDRINUSE {
        return "another program listens on 127.0.0.1 port \(environment["PORT"] ?? "8080"): stop it, or set PORT to a free port"
    }
    return "\(error)"
}

/// `HEARTBEAT_SECONDS`: seconds between an event stream's comments, 15 unless set; from 0.1 to 3,600.
func heartbeatInterval(_ setting: String?) throws -> Duration {
    guard let setting else { return .seconds(15) }
    guard let seconds = Double(setting), seconds.isFinite, (0.1...3600).contains(seconds) else {
        throw SettingError(message: "HEARTBEAT_SECONDS must be a number of seconds from 0.1 to 3600, not \"\(setting)\"")
    }
    return .milliseconds(Int64((seconds * 1000).rounded()))
}

/// `PORT`: the TCP port to listen on, 8080 unless set; from 1 to 65,535 (0 would be any port,
/// which nobody could then find).
func listeningPort(_ setting: String?) throws -> Int {
    guard let setting else { return 8080 }
    guard let port = Int(setting), (1...65_535).contains(port) else {
        throw SettingError(message: "PORT must be a TCP port number from 1 to 65535, not \"\(setting)\"")
    }
    return port
}

/// A setting that cannot be used, said in one line.
struct SettingError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
