import Repository

/// A member of a project: the table's primary key is (project_id, user_id).
struct TeamMember: Record, Equatable {
    static let tableName = "team_members"
    struct Key: Hashable, Codable, Sendable, Comparable {
        var projectId: Int64
        var userId: String
        static func < (a: Key, b: Key) -> Bool { (a.projectId, a.userId) < (b.projectId, b.userId) }
    }
    var projectId: Int64
    var userId: String
    var role: String
    var id: Key { Key(projectId: projectId, userId: userId) }
}

/// A row of a query over the table: any SELECT, read-only.
struct ProjectSize: Decodable, Equatable, Sendable {
    var projectId: Int64
    var members: Int
}

// 1. Your table, enabled: the library installs its `live` schema first (or, in a migration,
//    `SELECT live.enable_change_notifications('team_members');` after `migrate live install`).
let database = Database(try .environment())
try await database.query("""
    CREATE TABLE IF NOT EXISTS team_members (project_id bigint, user_id text, role text NOT NULL,
                                             PRIMARY KEY (project_id, user_id))
    """)
try await LiveSchema.enable("team_members", on: database)
try await database.query("INSERT INTO team_members VALUES (1, 'ada', 'owner') ON CONFLICT DO NOTHING")

// 2. A live handle onto one row, by its two-column key: written through, conflicts merged.
let repository = LiveRepository(database)
let ada = try await repository.read(TeamMember.self, id: .init(projectId: 1, userId: "ada"))
ada[\.role].value = "admin"
try await ada.save()

// 3. A live query over the table, and a live join or aggregate over anything.
let team = try await repository.readAll(TeamMember.self, where: "project_id = $1", parameters: [1],
                                        orderBy: [.ascending(\.userId)])
let sizes = try await repository.readAll(ProjectSize.self, sql: """
    SELECT project_id, count(*)::int AS members FROM team_members GROUP BY project_id ORDER BY project_id
    """)

// 4. Another writer adds a member (here a plain statement; psql or another process alike).
try await database.query("INSERT INTO team_members VALUES (1, 'grace', 'viewer') ON CONFLICT DO NOTHING")
for await members in team.values where members.count == 2 { break }
for await rows in sizes.values where rows.first?.members == 2 { break }
print(team.value.map(\.userId), ada.value.role, sizes.value.map(\.members))
repository.close()
database.close()
