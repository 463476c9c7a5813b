import Foundation
import Repository
import Testing

/// Text that is not UTF-8 — which a database in the `SQL_ASCII` encoding stores as it was
/// given — is refused with the column's name, never read with replacement characters that the
/// next save would write back over the original bytes.
@Suite("Text that is not UTF-8")
struct InvalidTextTests {
    struct Note: Record, Equatable {
        static let tableName = "notes"
        var id: Int64
        var body: String
        var other: String
    }

    @Test("a live read, a query and a live query refuse it naming the column; nothing is written; the bytes stay, and read as bytea")
    func refused() async throws {
        let database = try await TestServer.makeDatabase(options: "ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0")
        try await database.withConnection { connection in
            try await connection.execute(script: #"""
                CREATE TABLE notes (id bigint PRIMARY KEY, body text NOT NULL, other text NOT NULL);
                INSERT INTO notes VALUES (1, E'caf\xe9 \xff', 'x'), (2, 'plain', 'y');
                """#)
        }
        try await LiveSchema.enable("notes", on: database)
        let repository = LiveRepository(database)
        let error = await #expect(throws: ColumnDecodingError.self) { try await repository.read(Note.self, id: 1) }
        #expect("\(error.map { "\($0)" } ?? "")".contains("body") && "\(error.map { "\($0)" } ?? "")".contains("not valid UTF-8"), "\(String(describing: error))")
        await #expect(throws: ColumnDecodingError.self) { try await database.query("SELECT body FROM notes WHERE id = 1")[0].decode(String.self, at: 0) }
        await #expect(throws: (any Error).self) { try await repository.readAll(Note.self) }
        // A row of plain text reads and writes as ever.
        let plain = try await repository.read(Note.self, id: 2)
        plain[\.body].value = "café"
        try await plain.save()
        let bytes = try await database.query("SELECT body::bytea, (SELECT body::bytea FROM notes WHERE id = 2) FROM notes WHERE id = 1")[0]
        #expect(try bytes.decode(Data.self, at: 0) == Data([0x63, 0x61, 0x66, 0xE9, 0x20, 0xFF]), "the original bytes, untouched")
        #expect(try bytes.decode(Data.self, at: 1) == Data("café".utf8))
    }
}
