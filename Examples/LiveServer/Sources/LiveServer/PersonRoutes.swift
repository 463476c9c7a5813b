import AddressBookKit
import Foundation
import Hummingbird
import Repository
import ServiceLifecycle

/// `/people/{id}`: one person as JSON, tagged with the version of their rows (`ETag`); `PATCH`
/// renames them through a live handle, refused with 412 when `If-Match` names a version they
/// have moved on from; `/people/{id}/events` streams every change of them.
struct PersonRoutes: Sendable {
    let book: AddressBook
    let heartbeat: Duration
    let turns = PatchTurns()

    func add(to router: Router<BasicRequestContext>) {
        router.get("people/:id") { _, context in
            let (value, version) = try await current(person(context))
            return try Response.json(value, status: .ok, version: version)
        }
        router.patch("people/:id") { request, context in try await patch(request, context) }
        router.get("people/:id/events") { request, context in
            let handle = try await person(context)
            let values = PersonEvents(handle: handle, values: handle.values.cancelOnGracefulShutdown())
            return EventStream.response(to: request, values, heartbeat: heartbeat)
        }
    }

    private func patch(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let patch = try await request.decode(as: PersonPatch.self, context: context)
        try patch.validate()
        let handle = try await person(context)
        return try await turns.run(try context.parameters.require("id", as: Int64.self)) { try await rename(handle, patch, request) }
    }

    /// Renames the person behind `handle` (in the person's turn), or says why not.
    private func rename(_ handle: Var<Person>, _ patch: PersonPatch, _ request: Request) async throws -> Response {
        if let condition = request.headers[.ifMatch] {
            let (value, version) = current(handle)
            guard EntityTag.condition(condition, matches: version) else {
                return try Response.json(value, status: .preconditionFailed, version: version)
            }
        }
        handle[\.name].value = patch.name
        do {
            try await handle.save()
            let (value, version) = current(handle)
            return try Response.json(value, status: .ok, version: version)
        } catch LiveRecordError.conflict(_, _, let columns, let ours, let theirs, _) {
            let conflict = Conflict(columns: columns, ours: ours as? Person, theirs: theirs as? Person)
            // Tagged with the version that won, for a retry with `If-Match`.
            return try Response.json(conflict, status: .conflict, version: current(handle).1)
        } catch let error as LiveRecordError {
            if let reason = error.databaseRefusal {
                throw HTTPError(.unprocessableContent, message: "the name was not saved: the database refused it: \(reason)")
            }
            if error.isDeletion { throw HTTPError(.notFound, message: "this person was deleted") }
            // As every 503 (``DatabaseUnavailable``): the same request later may succeed.
            throw HTTPError(.serviceUnavailable, headers: [.retryAfter: "1"],
                            message: error.mayHaveCommitted ? "the database connection was lost after the write was sent: it may have committed"
                                : "the name was not saved: the database could not take the write")
        }
    }

    /// The live handle onto the person the path names; 404 when there is none.
    private func person(_ context: BasicRequestContext) async throws -> Var<Person> {
        let id = try context.parameters.require("id", as: Int64.self)
        do {
            return try await book.readPerson(id: id)
        } catch AddressBookError.noSuchPerson {
            throw HTTPError(.notFound, message: "no person has id \(id)")
        }
    }

    /// The handle's value and the version of the rows it came from, read as a pair (again if a
    /// newer row arrived in between).
    private func current(_ handle: Var<Person>) -> (Person, CommittedVersion?) {
        while true {
            let version = handle.committedVersion
            let value = handle.value
            if handle.committedVersion == version { return (value, version) }
        }
    }
}

/// Entity tags made of row versions.
enum EntityTag {
    /// The strong entity tag of `version`: `"7311.7302"`.
    static func of(_ version: CommittedVersion) -> String { "\"\(version)\"" }

    /// Whether an `If-Match` header value holds for `version` (`*`, or a list naming its tag;
    /// a weak tag never matches, as RFC 9110 asks of `If-Match`).
    static func condition(_ header: String, matches version: CommittedVersion?) -> Bool {
        guard let version else { return false }
        return header.split(separator: ",").contains {
            let tag = $0.trimmingCharacters(in: .whitespaces)
            return tag == "*" || tag == of(version)
        }
    }
}

/// A person's events: `person` with each value, until the person is deleted — then one
/// `deleted` event (`{"id":…}`), and the end. Iterated in the consuming task itself: no task
/// of its own to cancel from an `onTermination`, which the runtime runs holding a task's lock.
struct PersonEvents<Values: AsyncSequence<Person, Never> & Sendable>: AsyncSequence, Sendable {
    let handle: Var<Person>
    let values: Values

    struct AsyncIterator: AsyncIteratorProtocol {
        let handle: Var<Person>
        var values: Values.AsyncIterator
        var ended = false

        mutating func next() async -> String? {
            guard !ended, let value = await values.next(isolation: nil) else { return nil }
            guard handle.liveState != .deleted else {
                ended = true
                return EventStream.event("deleted", data: "{\"id\":\(value.id)}")
            }
            return EventStream.event("person", data: (try? Response.jsonText(value)) ?? "{}")
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(handle: handle, values: values.makeAsyncIterator()) }
}
