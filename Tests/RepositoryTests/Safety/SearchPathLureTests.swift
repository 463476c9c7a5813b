import Foundation
@testable import Repository
import Testing

/// The `live` schema's functions run as whoever writes (its triggers) or enables a table. A
/// role that may create in a schema on that writer's `search_path` can define functions that
/// PostgreSQL prefers to the built-ins those functions call — an exact match over
/// `to_json(anyelement)` or `format(text, VARIADIC "any")` — and have them run as the writer.
/// Version 1 of the schema called them; version 2 fixes every function's `search_path`.
@Suite("The live schema calls no function a writer's search_path puts first")
struct SearchPathLureTests {
    static let version1 = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../LiveSchema/SchemaVersion1/install.sql").standardized

    /// Functions `role` defines in its own schema `lure`, each a closer match than a built-in
    /// the live schema calls; each records that it ran, as whom.
    static func lures(owner role: String) -> String {
        let lures = [("to_json(bigint)", "json", "pg_catalog.to_json($1)"), ("to_json(text)", "json", "pg_catalog.to_json($1)"),
                     ("json_build_array(bigint, text)", "json", "pg_catalog.json_build_array($1, $2)"),
                     ("quote_ident(name)", "text", "pg_catalog.quote_ident($1::text)"),
                     ("format(text, regclass)", "text", "pg_catalog.format($1, $2)"),
                     ("format(text, text, text)", "text", "pg_catalog.format($1, $2, $3)")]
        return """
            CREATE SCHEMA lure AUTHORIZATION \(role);
            GRANT USAGE ON SCHEMA lure TO PUBLIC;
            SET ROLE \(role);
            CREATE TABLE lure.ran (who text, what text);
            GRANT INSERT ON lure.ran TO PUBLIC;
            """ + lures.map { signature, type, call in
                """
                CREATE FUNCTION lure.\(signature) RETURNS \(type) LANGUAGE plpgsql AS $$
                BEGIN INSERT INTO lure.ran VALUES (current_user, '\(signature)'); RETURN \(call); END $$;
                """
            }.joined(separator: "\n") + "\nRESET ROLE;"
    }

    /// Enables both tables and writes each of them every way, with the lure's schema first on
    /// the `search_path`.
    static let writesThroughTheLure = """
        BEGIN;
        SET LOCAL search_path = lure, public;
        SELECT live.enable_change_notifications('plain'), live.enable_change_notifications('pair');
        INSERT INTO plain VALUES (1, 'a'); UPDATE plain SET v = 'b'; DELETE FROM plain; TRUNCATE plain;
        INSERT INTO pair VALUES (1, 'k', 'a'); UPDATE pair SET b = 'l'; DELETE FROM pair; TRUNCATE pair;
        COMMIT;
        """

    @Test("version 1 ran every lure as the writer; upgraded to version 2, none runs, and every write is still announced")
    func luresRunNoMore() async throws {
        let database = try await TestServer.makeDatabase()
        defer { database.close() }
        let role = "lure_owner_\(UInt32.random(in: 0...UInt32.max))"
        try await database.withConnection { connection in
            try await connection.execute(script: """
                CREATE ROLE \(role) NOLOGIN;
                CREATE TABLE plain (id bigint PRIMARY KEY, v text);
                CREATE TABLE pair (a bigint, b text, v text, PRIMARY KEY (a, b));
                """ + Self.lures(owner: role))
            try await connection.execute(script: String(contentsOf: Self.version1, encoding: .utf8))
        }
        let writer = try await database.query("SELECT current_user")[0].decode(String.self, at: 0)
        func ran() async throws -> [String] {
            try await database.query("SELECT DISTINCT who || ' ' || what FROM lure.ran ORDER BY 1").map { try $0.decode(String.self, at: 0) }
        }

        try await database.withConnection { try await $0.execute(script: Self.writesThroughTheLure) }
        #expect(try await ran() == ["format(text, regclass)", "format(text, text, text)", "json_build_array(bigint, text)",
                                    "quote_ident(name)", "to_json(bigint)", "to_json(text)"].map { "\(writer) \($0)" })

        #expect(try await LiveSchema.install(on: database))
        #expect(try await LiveSchema.installedVersion(on: database) == 2)
        try await database.query("DELETE FROM lure.ran")
        let listener = try await RawListener(database: database.name(), channel: "live_changes")
        try await database.withConnection { try await $0.execute(script: Self.writesThroughTheLure) }
        #expect(try await ran() == [])
        var announced: [String] = []
        // The UPDATE of `pair` changes its key: the old one is announced gone.
        let expected = [("plain", "insert", "[1]"), ("plain", "update", "[1]"), ("plain", "delete", "[1]"), ("plain", "truncate", nil),
                        ("pair", "insert", #"[[1, "k"]]"#), ("pair", "update", #"[[1, "l"]]"#), ("pair", "delete", #"[[1, "k"]]"#),
                        ("pair", "delete", #"[[1, "l"]]"#), ("pair", "truncate", nil)]
        while announced.count < expected.count, let next = listener.next() { announced.append(next) }
        #expect(announced.count == expected.count, "\(announced)")
        for (notification, (table, operation, keys)) in zip(announced, expected) {
            #expect(notification.hasPrefix(#"{"table":"public.\#(table)","op":"\#(operation)""#), "\(notification)")
            if let keys { #expect(notification.contains(#""keys":\#(keys)"#), "\(notification)") }
        }
        // Roles are the cluster's: this one goes, with what it owns here.
        try await database.withConnection { try await $0.execute(script: "DROP OWNED BY \(role) CASCADE; DROP ROLE \(role)") }
    }
}
