/// A migration tool whose history table this tool can take over (see ``Migrator/adopt(_:acceptingEditedFiles:)``).
public enum MigrationTool: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// dbmate: `schema_migrations(version varchar(128) PRIMARY KEY)`, a row per applied file.
    case dbmate
    /// golang-migrate: `schema_migrations(version bigint, dirty boolean)`, one row — the
    /// version the database is at.
    case golangMigrate = "golang-migrate"
    /// sqlx: `_sqlx_migrations`, a row per applied migration.
    case sqlx
    /// Flyway: `flyway_schema_history`, a row per migration run, undo and baseline.
    case flyway

    /// The tool's name, as its users write it.
    public var description: String { rawValue }
}

/// What a table holding migration history is, told by its columns.
enum HistoryTableShape: Equatable {
    /// This tool's own table, its versions stored as `bigint` or `text`.
    case own(versionType: String)
    /// Another tool's table.
    case foreign(MigrationTool)
    /// Columns no known tool uses: `name type` each.
    case unknown(columns: [String])

    /// The shape of a table with these columns (name and `format_type`, in order).
    init(columns: [(name: String, type: String)]) {
        let types = Dictionary(columns.map { ($0.name, $0.type) }, uniquingKeysWith: { first, _ in first })
        let names = Set(types.keys)
        if Set(["version", "name", "checksum", "applied_at", "execution_ms"]).isSubset(of: names),
           let type = types["version"], ["bigint", "text"].contains(type) {
            self = .own(versionType: type)
        } else if names == ["version"], let type = types["version"], type == "text" || type.hasPrefix("character varying") {
            self = .foreign(.dbmate)
        } else if names == ["version", "dirty"], types["version"] == "bigint", types["dirty"] == "boolean" {
            self = .foreign(.golangMigrate)
        } else if Set(["version", "description", "installed_on", "success", "checksum", "execution_time"]) == names {
            self = .foreign(.sqlx)
        } else if Set(["installed_rank", "version", "description", "type", "script", "checksum", "installed_by",
                       "installed_on", "execution_time", "success"]).isSubset(of: names) {
            self = .foreign(.flyway)
        } else {
            self = .unknown(columns: columns.map { "\($0.name) \($0.type)" })
        }
    }
}

/// The tables that may hold a database's migration history, looked up in one statement.
struct HistoryTables {
    /// A table found, by the name it was looked up with, and its shape.
    struct Found {
        let name: String
        let shape: HistoryTableShape
    }

    /// The tables other tools use under their default names, beside this tool's own.
    static func candidates(own table: String) -> [String] {
        var names = [table]
        for name in ["schema_migrations", "_sqlx_migrations", "flyway_schema_history"] where !names.contains(name) { names.append(name) }
        return names
    }

    /// This tool's table, if it exists.
    let own: Found?
    /// Other tools' tables found under their default names (not the own table's name).
    let foreign: [Found]

    /// Looks up `own` and the other tools' default tables (through the search path, as the
    /// tools create them).
    static func inspect(own table: String, on connection: Connection) async throws -> HistoryTables {
        let names = candidates(own: table)
        let values = names.indices.map { "(\($0), $\($0 + 1))" }.joined(separator: ", ")
        let rows = try await connection.query("""
            SELECT n.position, a.attname::text, format_type(a.atttypid, a.atttypmod)
            FROM (VALUES \(values)) AS n(position, name)
            JOIN pg_attribute a ON a.attrelid = to_regclass(n.name) AND a.attnum > 0 AND NOT a.attisdropped
            ORDER BY n.position, a.attnum
            """, names.map { SQLIdentifier.quoted(qualified: $0) })
        var columns: [Int: [(name: String, type: String)]] = [:]
        for row in rows {
            columns[try row.decode(Int.self, at: 0), default: []].append((try row.decode(String.self, at: 1), try row.decode(String.self, at: 2)))
        }
        let found = names.indices.compactMap { index in columns[index].map { Found(name: names[index], shape: HistoryTableShape(columns: $0)) } }
        return HistoryTables(own: found.first { $0.name == table },
                             foreign: found.filter { if $0.name != table, case .foreign = $0.shape { true } else { false } })
    }

    /// Throws unless the own table is this tool's (or absent with no other tool's in sight).
    func requireOwn() throws {
        if let own {
            switch own.shape {
            case .own: return
            case .foreign(let tool): throw Self.takeOver(tool, own.name)
            case .unknown(let columns): throw Self.unknown(own.name, columns)
            }
        }
        if let other = foreign.first, case .foreign(let tool) = other.shape { throw Self.takeOver(tool, other.name) }
    }

    static func takeOver(_ tool: MigrationTool, _ table: String) -> MigrationError {
        MigrationError(.foreignHistory, "\(table) is \(tool)'s migration history table; take the database over with `migrate adopt` (Migrator.adopt), which records the versions \(tool) applied with today's checksums and applies nothing")
    }

    static func unknown(_ table: String, _ columns: [String]) -> MigrationError {
        MigrationError(.foreignHistory, "\(table) is not a migration history table this tool knows (its own, dbmate's, golang-migrate's, sqlx's or Flyway's): its columns are \(columns.joined(separator: ", ")); name another table with --history-table")
    }
}
