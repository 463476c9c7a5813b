import AddressBookKit
import Foundation
import Repository

/// The database a demo command works on, with the address book's schema applied.
struct DemoSession {
    let database: Database
    let book: AddressBook

    /// The local server's directory: `DEMO_DATA_DIRECTORY`, else a per-user default.
    static var localDirectory: String {
        LocalServer.directory(named: "demo", overriddenBy: "DEMO_DATA_DIRECTORY")
    }

    /// `DATABASE_URL`, unless it is unset or empty (an empty one is unset: `DATABASE_URL= demo …`).
    static var databaseURL: String? {
        ProcessInfo.processInfo.environment["DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Connects: `DATABASE_URL`, else the demo's persistent local server (started if needed,
    /// and left running). Then applies pending migrations.
    static func open() async throws -> DemoSession {
        var configuration: ConnectionConfiguration
        if Self.databaseURL != nil {
            configuration = try .environment()
        } else {
            let server = try await LocalServer.start(.persistent(directory: localDirectory))
            configuration = server.configuration
        }
        configuration.applicationName = "demo"
        let database = Database(configuration, maximumConnections: 4)
        try await AddressBook.migrate(database)
        return DemoSession(database: database, book: AddressBook(database))
    }

    /// Runs `body` on an open session and closes it afterwards.
    static func run<T>(_ body: (DemoSession) async throws -> T) async throws -> T {
        let session = try await open()
        defer { session.close() }
        return try await body(session)
    }

    func close() {
        book.close()
        database.close()
    }

    /// Reads person `id`, edits them through the live handle, waits until the edit is durable
    /// and prints the result — what every editing command does.
    static func edit(_ id: Int64, json: Bool, _ change: (Var<Person>) throws -> Void) async throws {
        try await run { session in
            let person = try await session.person(id)
            try change(person)
            try await person.save()
            Output.person(person.value, json: json)
        }
    }

    /// A live handle onto person `id`, or a one-line error.
    func person(_ id: Int64) async throws -> Var<Person> {
        try await book.readPerson(id: id)
    }
}
