import Foundation
@testable import Repository
import Testing

/// `SQLIdentifier.quoted(qualified:)` keeps a part already quoted as it is — only when that
/// part is one quoted identifier: text that merely starts and ends with a quote is quoted whole.
@Suite("Qualified names cannot inject SQL")
struct QualifiedNameInjectionTests {
    static let injections = [
        #""people" UNION ALL SELECT id, secret FROM "victims""#,
        #"public."people" UNION ALL SELECT id, secret FROM "victims""#,
        #""people" WHERE false UNION ALL SELECT id, secret FROM "victims" --"""#,
        #""people"; DROP TABLE victims; --"""#,
    ]

    @Test("well-formed quoted parts are kept; anything else in quotes is quoted whole")
    func parts() {
        #expect(SQLIdentifier.quoted(qualified: #"crm."odd.name""#) == #""crm"."odd.name""#)
        #expect(SQLIdentifier.quoted(qualified: #""we""ird".x"#) == #""we""ird"."x""#)
        #expect(SQLIdentifier.quoted(qualified: #""people" UNION SELECT 1"#) == #""""people"" UNION SELECT 1""#)
        #expect(!SQLIdentifier.isOneQuotedIdentifier(#""a" "b""#) && !SQLIdentifier.isOneQuotedIdentifier(#""""#))
        #expect(SQLIdentifier.isOneQuotedIdentifier(#""a""b""#) && SQLIdentifier.isOneQuotedIdentifier(#""a.b c""#))
    }

    @Test("each injection names a table that does not exist: no other table's rows are read, none is dropped")
    func againstTheServer() async throws {
        let database = try await TestServer.makeDatabase()
        defer { database.close() }
        try await database.withConnection { try await $0.execute(script: """
            CREATE TABLE people (id int, name text); INSERT INTO people VALUES (1, 'Ada');
            CREATE TABLE victims (id int, secret text); INSERT INTO victims VALUES (2, 'top secret');
            """) }
        for name in Self.injections {
            let error = await #expect(throws: PostgresError.self) {
                try await database.withConnection { try await $0.execute(script: "SELECT id, name FROM \(SQLIdentifier.quoted(qualified: name))") }
            }
            #expect(error?.sqlState == PostgresError.Code.undefinedTable, "\(name): \(String(describing: error))")
        }
        #expect(try await database.query("SELECT secret FROM victims")[0].decode(String.self, at: 0) == "top secret")
    }
}
