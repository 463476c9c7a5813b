/// How a directory's files hold its migrations. A directory holds one layout.
public enum MigrationFileLayout: String, Sendable, Hashable, CaseIterable {
    /// dbmate's, and this tool's own: `0007_add_email.sql` (or `20240229134506_add_email.sql`)
    /// with a `-- migrate:up` section and an optional `-- migrate:down` section.
    case dbmate
    /// golang-migrate's and sqlx's: `000007_add_email.up.sql`, and `000007_add_email.down.sql`
    /// when the migration can be rolled back. Each file is one section.
    case upDownFiles
    /// Flyway's: `V7__add_email.sql`, dotted versions (`V7.1__…`, `V7_1__…`), and
    /// `U7__add_email.sql` to undo one. Each file is one section.
    case flyway
    /// sqlx's simple migrations (`sqlx migrate add` without `-r`): `20240229134506_add_email.sql`
    /// holding plain SQL, with no `-- migrate:` marker in any file of the directory. Each file
    /// is an up section; none can be rolled back.
    case plainFiles

    /// The layout in words, with an example file name.
    public var summary: String {
        switch self {
        case .dbmate: "dbmate's (0001_name.sql with -- migrate:up and -- migrate:down sections)"
        case .upDownFiles: "golang-migrate's and sqlx's (0001_name.up.sql and 0001_name.down.sql)"
        case .flyway: "Flyway's (V1__name.sql, U1__name.sql)"
        case .plainFiles: "sqlx's simple ones (0001_name.sql holding plain SQL, no -- migrate: markers)"
        }
    }
}

/// What a file's name says it is.
struct MigrationFileName: Hashable {
    enum Part: Hashable {
        /// A dbmate file: both sections.
        case sections
        /// The up half (`.up.sql`, `V…`).
        case up
        /// The down half (`.down.sql`, `U…`).
        case down
    }

    let layout: MigrationFileLayout
    let version: MigrationVersion
    let name: String
    let part: Part

    /// Why a `.sql` file is left alone rather than read, if it is (a Flyway repeatable
    /// migration, `R__views.sql`, which runs whenever it changes: not supported).
    static func skipReason(_ fileName: String) -> String? {
        if fileName.hasPrefix("R__") { return "a Flyway repeatable migration (R__), which this tool does not run" }
        if fileName.hasPrefix(".") { return "a hidden file (an editor's lock or backup file?)" }
        return nil
    }

    /// Reads `fileName` (a `.sql` file, in any case) in whichever layout it follows.
    /// - Throws: ``MigrationError`` for a name that follows none.
    init(_ fileName: String) throws {
        let stem = fileName.dropLast(4)
        if let first = stem.first, first == "V" || first == "U", let separator = stem.range(of: "__"),
           let version = MigrationVersion(stem[stem.index(after: stem.startIndex)..<separator.lowerBound]),
           separator.upperBound < stem.endIndex {
            self.init(layout: .flyway, version: version, name: String(stem[separator.upperBound...]), part: first == "V" ? .up : .down)
            return
        }
        let digits = stem.prefix { $0.isASCII && $0.isNumber }
        let rest = stem.dropFirst(digits.count)
        if digits.count > 18 {
            throw MigrationError(.invalidFile, "\(fileName): a version has at most 18 digits (a timestamp YYYYMMDDHHMMSS has 14), this one \(digits.count)")
        }
        guard !digits.isEmpty, let number = Int64(digits) else {
            throw MigrationError(.invalidFile, "\(fileName): a migration file is named NNNN_name.sql or YYYYMMDDHHMMSS_name.sql (or, from another tool, NNNN_name.up.sql and NNNN_name.down.sql, or V1__name.sql)")
        }
        // dbmate reads any name that starts with digits (`001-init.sql`, `20240101120000.sql`).
        guard rest.hasPrefix("_") else {
            self.init(layout: .dbmate, version: MigrationVersion(number), name: Migration.nameAfterVersion(rest), part: .sections)
            return
        }
        let name = rest.dropFirst()
        for (suffix, part) in [(".up", Part.up), (".down", Part.down)] where name.lowercased().hasSuffix(suffix) {
            self.init(layout: .upDownFiles, version: MigrationVersion(number), name: String(name.dropLast(suffix.count)), part: part)
            return
        }
        self.init(layout: .dbmate, version: MigrationVersion(number), name: String(name), part: .sections)
    }

    private init(layout: MigrationFileLayout, version: MigrationVersion, name: String, part: Part) {
        self.layout = layout
        self.version = version
        self.name = name
        self.part = part
    }
}
