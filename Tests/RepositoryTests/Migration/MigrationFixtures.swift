import Foundation
import Repository

/// A temporary migrations directory, deleted with the test's scope by `remove()`.
struct MigrationDirectory {
    let path = FileManager.default.temporaryDirectory.path + "/migrations-\(UInt32.random(in: 0...UInt32.max))"

    init(_ files: [String: String] = [:]) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        for (name, contents) in files { try write(name, contents) }
    }

    func write(_ name: String, _ contents: String) throws {
        try contents.write(toFile: path + "/" + name, atomically: true, encoding: .utf8)
    }

    func delete(_ name: String) throws { try FileManager.default.removeItem(atPath: path + "/" + name) }

    func migrator() throws -> Migrator { try Migrator(directory: path) }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

extension Database {
    func count(_ sql: String) async throws -> Int { try await query(sql)[0].decode(Int.self, at: 0) }

    func tableExists(_ name: String) async throws -> Bool {
        try await query("SELECT to_regclass($1) IS NOT NULL", [name])[0].decode(Bool.self, at: 0)
    }
}

/// The library's `live` schema and the project's migrations (the address book's), as the demo
/// applies them.
func migrateProject(_ database: Database) async throws {
    try await LiveSchema.install(on: database)
    try await Migrator(directory: ProjectMigrationsTests.directory).migrate(database)
}
