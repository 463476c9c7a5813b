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
                     ("json_build_array(uuid, text)", "json", "pg_catalog.json_build_array($1, $2)"),
                     ("quote_ident(name)", "text", "pg_catalog.quote_ident($1::text)"),
                     ("format(text, regclass)", "text", "pg_catalog.format($1, $2)"),
                     ("format(text, text, text)", "text", "pg_catalog.format($1, $2, $3)"),
                     ("pg_advisory_xact_lock(text)", "void", "pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext($1))"),
                     ("oid_is(oid, regclass)", "boolean", "$1 OPERATOR(pg_catalog.=) $2::oid")]
        return """
            CREATE SCHEMA lure AUTHORIZATION \(role);
            GRANT USAGE ON SCHEMA lure TO PUBLIC;
            SET ROLE \(role);
            CREATE TABLE lure.ran (who text, what text);
            GRANT INSERT ON lure.ran TO PUBLIC;
            """ + lures.map { signature, type, call in
                """
                CREATE FUNCTION lure.\(signature) RETURNS \(type) LANGUAGE plpgsql AS $$
                BEGIN INSERT INTO lure.ran VALUES (current_user, '\(signature)'); \(type == "void" ? "PERFORM \(call); RETURN;" : "RETURN \(call);") END $$;
                """
            }.joined(separator: "\n") + """

            CREATE OPERATOR lure.= (LEFTARG = oid, RIGHTARG = regclass, FUNCTION = lure.oid_is);
            RESET ROLE;
            """
    }

    /// Enables both tables and writes each of them every way, with the lure's schema first on
    /// the `search_path`.
    static let writesThroughTheLure = """
        BEGIN;
        SET LOCAL search_path = lure, public;
        SELECT live.enable_change_notifications('plain'), live.enable_change_notifications('pair');
        INSERT INTO plain VALUES (1, 'a'); UPDATE plain SET v = 'b'; DELETE FROM plain; TRUNCATE plain;
        INSERT INTO pair VALUES (1, 'k', 'a'); UPDATE pair SET b = 'l'; DELETE FROM pair; TRUNCATE pair;
        INSERT INTO events_eu VALUES ('00000000-0000-0000-0000-000000000002', 'eu'); DELETE FROM events_eu;
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
                CREATE TABLE events (id uuid, region text, PRIMARY KEY (id, region)) PARTITION BY LIST (region);
                CREATE TABLE events_eu PARTITION OF events FOR VALUES IN ('eu');
                CREATE TABLE rekeyed (id int PRIMARY KEY);
                CREATE TABLE doc (id int, version int, target text, PRIMARY KEY (id, version, target));
                """ + Self.lures(owner: role))
            try await connection.execute(script: String(contentsOf: Self.version1, encoding: .utf8))
            try await connection.execute(script: """
                SELECT live.enable_change_notifications('events_eu'), live.enable_change_notifications('rekeyed');
                ALTER TABLE rekeyed ALTER COLUMN id TYPE numeric;
                """)
        }
        let writer = try await database.query("SELECT current_user")[0].decode(String.self, at: 0)
        func ran() async throws -> [String] {
            try await database.query("SELECT DISTINCT who || ' ' || what FROM lure.ran ORDER BY 1").map { try $0.decode(String.self, at: 0) }
        }

        try await database.withConnection { try await $0.execute(script: Self.writesThroughTheLure) }
        #expect(try await ran() == ["format(text, regclass)", "format(text, text, text)", "json_build_array(bigint, text)", "json_build_array(uuid, text)",
                                    "oid_is(oid, regclass)", "quote_ident(name)", "to_json(bigint)", "to_json(text)"].map { "\(writer) \($0)" })
        try await database.query("DELETE FROM lure.ran")

        // Installed and enabled through a connection whose search_path finds the lures first.
        let lured = Database(database.configuration, maximumConnections: 1)
        defer { lured.close() }
        try await lured.withConnection { try await $0.execute(script: "SET search_path = lure, public") }
        #expect(try await LiveSchema.install(on: lured))
        #expect(try await LiveSchema.installedVersion(on: database) == LiveSchema.version)
        #expect(try await LiveSchema.unpinnedFunctions(on: database) == [])
        try await LiveSchema.enable("doc", on: lured)
        try await LiveSchema.disable("doc", on: lured)
        try await LiveSchema.enable("doc", on: lured)
        #expect(try await ran() == [])
        // Version 1 announced these; version 2 does, with no lure, also a partition enabled
        // alone and a table whose key changed since (its function fixed in place).
        try await database.withConnection { try await $0.execute(script: """
            SET search_path = lure, public;
            INSERT INTO rekeyed VALUES (1.5);
            INSERT INTO doc VALUES (1, 2, 'three');
            RESET search_path;
            """) }
        #expect(try await ran() == [])
        let listener = try await RawListener(database: database.name(), channel: "live_changes")
        try await database.withConnection { try await $0.execute(script: Self.writesThroughTheLure + """
            INSERT INTO doc VALUES (4, 5, 'six');
            """) }
        #expect(try await ran() == [])
        var announced: [String] = []
        // The UPDATE of `pair` changes its key: the old one is announced gone.
        let expected = [("plain", "insert", "[1]"), ("plain", "update", "[1]"), ("plain", "delete", "[1]"), ("plain", "truncate", nil),
                        ("pair", "insert", #"[[1, "k"]]"#), ("pair", "update", #"[[1, "l"]]"#), ("pair", "delete", #"[[1, "k"]]"#),
                        ("pair", "delete", #"[[1, "l"]]"#), ("pair", "truncate", nil),
                        ("events_eu", "insert", #"[["00000000-0000-0000-0000-000000000002", "eu"]]"#),
                        ("events_eu", "delete", #"[["00000000-0000-0000-0000-000000000002", "eu"]]"#), ("doc", "insert", #"[[4, 5, "six"]]"#)]
        while announced.count < expected.count, let next = listener.next() { announced.append(next) }
        #expect(announced.count == expected.count, "\(announced)")
        for (notification, (table, operation, keys)) in zip(announced, expected) {
            #expect(notification.hasPrefix(#"{"table":"public.\#(table)","op":"\#(operation)""#), "\(notification)")
            if let keys { #expect(notification.contains(#""keys":\#(keys)"#), "\(notification)") }
        }
        // Roles are the cluster's: this one goes, with what it owns here.
        try await database.withConnection { try await $0.execute(script: "DROP OWNED BY \(role) CASCADE; DROP ROLE \(role)") }
    }

    @Test("version 1's schema, owned by a role that owns one enabled table of two, upgraded by it; another role's function is named until its owner installs; a third role writes both tables")
    func upgradeByTheSchemaOwner() async throws {
        let database = try await TestServer.makeDatabase()
        defer { database.close() }
        let suffix = UInt32.random(in: 0...UInt32.max)
        let (installer, owner, writer) = ("live_installer_\(suffix)", "table_owner_\(suffix)", "table_writer_\(suffix)")
        let name = try await database.name()
        try await database.withConnection { connection in
            try await connection.execute(script: """
                CREATE ROLE \(installer) NOLOGIN; CREATE ROLE \(owner) NOLOGIN; CREATE ROLE \(writer) NOLOGIN;
                GRANT CREATE ON DATABASE \(SQLIdentifier.quoted(name)) TO \(installer);
                CREATE TABLE mine (id bigint PRIMARY KEY, v text); ALTER TABLE mine OWNER TO \(installer);
                CREATE TABLE theirs (code text PRIMARY KEY, v text); ALTER TABLE theirs OWNER TO \(owner);
                GRANT ALL ON mine, theirs TO \(writer);
                SET ROLE \(installer);
                """)
            try await connection.execute(script: String(contentsOf: Self.version1, encoding: .utf8))
            try await connection.execute(script: """
                SELECT live.enable_change_notifications('mine');
                RESET ROLE;
                SELECT live.enable_change_notifications('theirs');
                """)
        }
        // A role that may not upgrade it (no CREATE on the database, owns nothing) goes on as before.
        let asWriter = Database(database.configuration, maximumConnections: 1)
        defer { asWriter.close() }
        try await asWriter.withConnection { try await $0.execute(script: "SET ROLE \(writer)") }
        #expect(try await LiveSchema.install(on: asWriter) == false)
        #expect(try await LiveSchema.installedVersion(on: database) == 1)

        let asInstaller = Database(database.configuration, maximumConnections: 1)
        defer { asInstaller.close() }
        try await asInstaller.withConnection { try await $0.execute(script: "SET ROLE \(installer)") }
        #expect(try await LiveSchema.install(on: asInstaller))
        #expect(try await LiveSchema.installedVersion(on: database) == LiveSchema.version)
        // The function for `theirs`' key shape is the superuser's: the installer could not make it anew.
        let left = try await LiveSchema.unpinnedFunctions(on: database)
        #expect(left.count == 1 && left[0].hasPrefix("live.announce_"), "\(left)")

        let listener = try await RawListener(database: name, channel: "live_changes")
        try await database.withConnection { try await $0.execute(script: """
            SET ROLE \(writer); INSERT INTO mine VALUES (1, 'a'); INSERT INTO theirs VALUES ('k', 'b'); RESET ROLE;
            """) }
        let first = listener.next(), second = listener.next()
        #expect(first?.hasPrefix(#"{"table":"public.mine","op":"insert""#) == true, "\(String(describing: first))")
        #expect(second?.hasPrefix(#"{"table":"public.theirs","op":"insert""#) == true, "\(String(describing: second))")

        #expect(try await LiveSchema.install(on: database) == false)  // up to date; the superuser fixes what was left
        #expect(try await LiveSchema.unpinnedFunctions(on: database) == [])
        try await database.withConnection { try await $0.execute(script: """
            DROP OWNED BY \(installer), \(owner), \(writer) CASCADE; DROP ROLE \(installer), \(owner), \(writer);
            """) }
    }
}
