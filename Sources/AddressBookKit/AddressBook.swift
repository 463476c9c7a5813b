import Foundation
public import IdentifiedCollections
public import Repository

/// The address book: people and their addresses as live handles, over any database the
/// ``migrations`` have been applied to.
///
/// ```swift
/// let book = AddressBook(database)
/// let ada = try await book.addPerson(name: "Ada", streets: ["12 St James's Square"])
/// let everyone = try await book.people()           // live, ordered by name
/// ada[\.name].value = "Ada Lovelace"               // everyone[id: ada.value.id] follows
/// try await ada.save()
/// ```
public final class AddressBook: Sendable {
    /// The live repository behind the handles; its `errors` reports failed background writes.
    public let repository: LiveRepository

    /// Brings `database` up to date: the library's `live` schema (``LiveSchema/install(on:)``),
    /// then the address book's migrations — `people` and `addresses`, both live. A database
    /// migrated before the library owned the `live` schema keeps its history: the three
    /// migrations that carried it, now empty, are accepted as rewritten.
    ///
    /// - Throws: ``AddressBookError/tablesInTheWay(_:)``, before changing anything, when the
    ///   database has a `people` or `addresses` table the address book did not make, and
    ///   ``AddressBookError/historyInTheWay(_:)`` when its migration history is another
    ///   project's (an application's own `migrate` keeps its history in the same table).
    @discardableResult
    public static func migrate(_ database: Database) async throws -> [Migration] {
        let migrator = try migrations()
        try await refuseTablesInTheWay(database, migrator)
        try await migrator.acceptRewrites(database, rewrittenMigrations)
        do {
            try await migrator.validate(database)
        } catch let error as MigrationError {
            throw AddressBookError.historyInTheWay(error.message)
        }
        try await LiveSchema.install(on: database)
        return try await migrator.migrate(database)
    }

    /// Throws when the migration that makes `people` and `addresses` is pending but a table of
    /// either name is there already: the database is someone else's (an application's, with
    /// `DATABASE_URL` pointed at it), and the demo must neither fail halfway nor use its tables.
    private static func refuseTablesInTheWay(_ database: Database, _ migrator: Migrator) async throws {
        guard try await migrator.status(database).contains(where: { $0.version == 2 && $0.state == .pending }) else { return }
        let found = try await database.query(
            "SELECT name FROM unnest($1::text[]) AS name WHERE to_regclass(quote_ident(name)) IS NOT NULL ORDER BY name",
            [["addresses", "people"]])
        let names = try found.map { try $0.decode(String.self, at: 0) }
        if !names.isEmpty { throw AddressBookError.tablesInTheWay(names) }
    }

    /// The checksums of the migrations as they were before the library took the `live` schema
    /// over: 0001, 0004 and 0005 held its SQL, and 0003 touched one of its functions.
    static let rewrittenMigrations: [MigrationVersion: String] = [
        1: "aeb1ef1393ab2be5e8048c639f23d0270b758357f86bb850e7042fcb7292daa4",
        3: "c34f9f5cecdbd3ed9e29e7415732a35518f20e55835ba3767446d7759c4eb137",
        4: "1bdef3d7959422e7701e371e0037a4cc030de86594365e8672c72803a31a3f8d",
        5: "1aff91a5685b7ff3564f37d92c567c8bb80da0ccf97f6074d395202195d1e5c1",
    ]

    /// The address book's migrations alone (``migrate(_:)`` runs them after installing the
    /// `live` schema they need).
    public static func migrations() throws -> Migrator {
        guard let directory = Bundle.module.url(forResource: "Migrations", withExtension: nil) else {
            throw AddressBookError.missingMigrations
        }
        return try Migrator(directory: directory.path)
    }

    /// An address book over `database`.
    public init(_ database: Database, conflictPolicy: ConflictPolicy = .databaseWins) {
        repository = LiveRepository(database, conflictPolicy: conflictPolicy)
    }

    /// Stops following changes; handles keep their values.
    public func close() { repository.close() }

    /// A live handle onto the person with `id` and their addresses.
    /// - Throws: ``AddressBookError/noSuchPerson(_:)`` if there is none.
    public func readPerson(id: Int64) async throws -> Var<Person> {
        do {
            return try await repository.read(Person.self, id: id)
        } catch LiveRecordError.notFound {
            throw AddressBookError.noSuchPerson(id)
        }
    }

    /// Everyone, ordered by name, kept current as any process adds, renames or deletes people
    /// or changes their addresses. Elements are live: `people[id: x]` writes through.
    public func people() async throws -> Var<IdentifiedArrayOf<Person>> {
        try await repository.readAll(Person.self, orderBy: [.ascending(\.name)])
    }

    /// Adds a person with addresses in one transaction, and returns a live handle onto them.
    public func addPerson(name: String, streets: [String] = []) async throws -> Var<Person> {
        let id = try await repository.database.transaction { connection in
            let id = try await connection.query("INSERT INTO people (name) VALUES ($1) RETURNING id", [name])[0].decode(Int64.self, at: 0)
            for (position, street) in streets.enumerated() {
                try await connection.query("INSERT INTO addresses (id, person_id, position, street) VALUES ($1, $2, $3, $4)",
                                           [UUID(), id, position, street])
            }
            return id
        }
        return try await readPerson(id: id)
    }

    /// Deletes the person and, by cascade, their addresses; every handle onto them reports
    /// `.deleted`.
    /// - Throws: ``AddressBookError/noSuchPerson(_:)`` if there is none.
    public func deletePerson(id: Int64) async throws {
        let deleted = try await repository.database.query("DELETE FROM people WHERE id = $1", [id])
        guard deleted.affectedRows == 1 else { throw AddressBookError.noSuchPerson(id) }
    }
}

/// Why the address book could not do what was asked.
public enum AddressBookError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No person has this id.
    case noSuchPerson(Int64)
    /// The person has no address with this id.
    case noSuchAddress(person: Int64, address: String)
    /// The migrations were not found beside the program (its resource bundle is missing).
    case missingMigrations
    /// The database has tables of these names that the address book did not make.
    case tablesInTheWay([String])
    /// The database's migration history is not the address book's (what disagrees, said).
    case historyInTheWay(String)

    /// One sentence.
    public var description: String {
        switch self {
        case .noSuchPerson(let id): "no person has id \(id)"
        case .noSuchAddress(let person, let address): "person \(person) has no address \(address)"
        case .missingMigrations: "the address book's migrations were not found beside the program"
        case .tablesInTheWay(let names):
            "this database already has \(names.count == 1 ? "a table" : "tables") \(names.joined(separator: " and ")) that the address book did not make; "
                + "nothing was changed: point DATABASE_URL at an empty database (createdb demo), or unset it to use the demo's own server"
        case .historyInTheWay:
            "this database's migration history (schema_migrations) is another project's, not the address book's; "
                + "nothing was changed: point DATABASE_URL at an empty database (createdb demo), or unset it to use the demo's own server"
        }
    }
}
