// LiveServer: the address book over HTTP, live.
//
//   DATABASE_URL=postgres://… PORT=8080 swift run LiveServer
//
//   GET   /people               everyone, ordered by name (JSON)
//   GET   /people/{id}          one person (JSON)
//   PATCH /people/{id}          {"name": "…"}: written through a live handle; 409 with both
//                               values when another writer changed the name first
//   GET   /people/{id}/events   Server-Sent Events: the person now, then every change by anyone
//
// The database, the repository and the HTTP server run in one ServiceGroup: SIGTERM or SIGINT
// stops the server first, then the repository flushes pending writes, then the pool closes.
import AddressBookKit
import Foundation
import Hummingbird
import Logging
import Repository
import ServiceLifecycle

let logger = {
    var logger = Logger(label: "LiveServer")
    logger.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
    return logger
}()

let database = Database(try .environment(), maximumConnections: 8, logger: logger)
try await AddressBook.migrate(database)
let book = AddressBook(database)
let everyone = try await book.people()   // one live query, kept current for GET /people

let router = Router()
router.get("people") { _, _ in everyone.value.elements }
router.get("people/:id") { _, context in try await person(context).value }
router.patch("people/:id") { request, context -> Response in
    let patch = try await request.decode(as: PersonPatch.self, context: context)
    let handle = try await person(context)
    handle[\.name].value = patch.name
    do {
        try await handle.save()
        return try Response.json(handle.value, status: .ok)
    } catch LiveRecordError.conflict(_, _, let columns, let ours, let theirs, _) {
        let conflict = Conflict(columns: columns, ours: ours as? Person, theirs: theirs as? Person)
        return try Response.json(conflict, status: .conflict)
    }
}
router.get("people/:id/events") { _, context -> Response in
    let handle = try await person(context)
    return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
                    body: ResponseBody { writer in
                        // The current value, then every change, until the client leaves or the server stops.
                        for await value in handle.values.cancelOnGracefulShutdown() {
                            try await writer.write(ByteBuffer(string: "event: person\ndata: \(Response.jsonText(value))\n\n"))
                        }
                        try await writer.finish(nil)
                    })
}

/// The live handle onto the person the path names; 404 when there is none.
@Sendable func person(_ context: some RequestContext) async throws -> Var<Person> {
    let id = try context.parameters.require("id", as: Int64.self)
    do {
        return try await book.readPerson(id: id)
    } catch AddressBookError.noSuchPerson {
        throw HTTPError(.notFound, message: "no person has id \(id)")
    }
}

let port = ProcessInfo.processInfo.environment["PORT"].flatMap(Int.init) ?? 8080
let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
                      onServerRunning: { _ in logger.info("listening", metadata: ["port": "\(port)"]) }, logger: logger)
// Shut down in reverse order: the HTTP server, then the repository (flushing), then the pool.
let services = ServiceGroup(services: [database, book.repository, app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
try await services.run()
