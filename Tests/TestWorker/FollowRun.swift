// `test-worker follow <row id>` (DATABASE_URL: the database): holds a live handle on row <id>
// of `contacts` and prints `ready`, then `value <name>` whenever its name changes and
// `error <description>` for everything the repository reports, until it is killed.
import Foundation
import Repository

struct FollowedContact: Record, Equatable {
    static let tableName = "contacts"
    var id: Int64
    var name: String
}

/// Follows one row and says what happens to it.
func follow(_ arguments: [String]) async throws {
    guard arguments.count == 1, let id = Int64(arguments[0]) else { throw Usage("follow <row id>") }
    let repository = LiveRepository(Database(try .environment(), maximumConnections: 2))
    let handle = try await repository.read(FollowedContact.self, id: id)
    let subscription = handle[\.name].observe { say("value \($0.new)") }
    say("ready")
    for await error in repository.errors { say("error \(error)") }
    withExtendedLifetime(subscription) {}
}
