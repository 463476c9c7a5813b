import Foundation
import Repository

struct Contact: Record, Equatable {
    static let tableName = "contacts"
    var id: Int64
    var name: String
    var email: String?
}

/// A database with the change-notification helper and a `contacts` table using it (with no
/// `version` column: rows are versioned by PostgreSQL's `xmin`).
func makeContactsDatabase() async throws -> Database {
    let database = try await TestServer.makeDatabase()
    try await migrateProject(database)
    try await database.withConnection { connection in
        try await connection.execute(script: """
            CREATE TABLE contacts (id bigint PRIMARY KEY, name text NOT NULL, email text UNIQUE);
            SELECT live.enable_change_notifications('contacts');
            """)
    }
    for (id, name) in [(1, "Ada"), (2, "Grace"), (3, "Edsger")] {
        try await database.query("INSERT INTO contacts (id, name, email) VALUES ($1, $2, $3)", [id, name, "\(name.lowercased())@example.com"])
    }
    return database
}

/// Collects a repository's reported errors.
final class ErrorLog: Sendable {
    let errors = Recorder<String>()
    init(_ repository: LiveRepository) {
        let errors = errors
        // Subscribed here, not in the task: an error reported before the task runs is kept.
        let stream = repository.errors
        Task { for await error in stream { errors.append("\(error)") } }
    }
}

struct VersionedContact: Record {
    static let tableName = "contacts"
    var id: Int64
    var name: String
    var version: Int64
}

struct LivePerson: Record {
    static let tableName = "people"
    var id: Int64
    var name: String
}
