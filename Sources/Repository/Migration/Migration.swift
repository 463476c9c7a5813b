/// One versioned schema change: SQL to apply it and, optionally, SQL to undo it.
///
/// In a file (`0007_add_email.sql` or `20240229134506_add_email.sql`):
///
/// ```sql
/// -- migrate:up
/// ALTER TABLE people ADD COLUMN email text;
///
/// -- migrate:down
/// ALTER TABLE people DROP COLUMN email;
/// ```
///
/// `-- migrate:up transaction:false` runs the section statement by statement outside a
/// transaction, for statements such as `CREATE INDEX CONCURRENTLY`.
public struct Migration: Sendable, Hashable {
    /// The version: the file name's leading digits. Migrations apply in ascending order.
    public let version: Int64
    /// The name after the version, such as `add_email`.
    public let name: String
    /// The SQL that applies the migration.
    public let up: String
    /// The SQL that undoes it, if any.
    public let down: String?
    /// Whether ``up`` runs in a transaction together with its history row (the default).
    public let upRunsInTransaction: Bool
    /// Whether ``down`` runs in a transaction together with deleting its history row.
    public let downRunsInTransaction: Bool
    /// Where the migration came from (a file path, or a name for migrations built in code).
    public let source: String
    /// The 1-based line of ``source`` on which ``up`` starts, to point errors at the file.
    public let upLine: Int
    /// The 1-based line of ``source`` on which ``down`` starts.
    public let downLine: Int

    /// A migration built in code rather than read from a file.
    public init(version: Int64, name: String, up: String, down: String? = nil,
                upRunsInTransaction: Bool = true, downRunsInTransaction: Bool = true) {
        self.version = version
        self.name = name
        self.up = up
        self.down = down
        self.upRunsInTransaction = upRunsInTransaction
        self.downRunsInTransaction = downRunsInTransaction
        self.source = "\(version)_\(name)"
        self.upLine = 1
        self.downLine = 1
    }

    /// SHA-256 of the up section with line endings normalized, so CRLF and LF copies of a
    /// file have the same checksum.
    public var checksum: String {
        SHA256.hex(up.replacingOccurrences(of: "\r\n", with: "\n").utf8)
    }

    /// Parses a migration file's contents.
    /// - Throws: ``MigrationError`` when the name or the sections are malformed.
    public init(fileName: String, path: String? = nil, contents: String) throws {
        guard let (version, name) = Self.versionAndName(fileName) else {
            throw MigrationError(.invalidFile, "\(fileName): a migration file is named NNNN_name.sql or YYYYMMDDHHMMSS_name.sql")
        }
        let sections = try MigrationSections(contents, file: path ?? fileName)
        self.version = version
        self.name = name
        self.up = sections.up.sql
        self.down = sections.down?.sql
        self.upRunsInTransaction = sections.up.inTransaction
        self.downRunsInTransaction = sections.down?.inTransaction ?? true
        self.source = path ?? fileName
        self.upLine = sections.up.line
        self.downLine = sections.down?.line ?? 1
    }

    /// Whether `fileName` ends in `.sql`, in any case.
    static func isSQLFile(_ fileName: String) -> Bool {
        fileName.lowercased().hasSuffix(".sql")
    }

    /// `0007_add_email.sql` (or `.SQL`) → (7, "add_email").
    static func versionAndName(_ fileName: String) -> (Int64, String)? {
        guard isSQLFile(fileName) else { return nil }
        let stem = fileName.dropLast(4)
        let digits = stem.prefix { $0.isASCII && $0.isNumber }
        let rest = stem.dropFirst(digits.count)
        guard !digits.isEmpty, digits.count <= 18, rest.hasPrefix("_"), rest.count > 1, let version = Int64(digits) else {
            return nil
        }
        return (version, String(rest.dropFirst()))
    }
}

/// The `-- migrate:up` and `-- migrate:down` sections of a file.
struct MigrationSections {
    struct Section {
        var sql = ""
        var line: Int
        var inTransaction: Bool
    }

    var up: Section
    var down: Section?

    init(_ contents: String, file: String) throws {
        if contents.utf8.contains(0) {
            let line = contents.prefix { $0 != "\0" }.filter(\.isNewline).count + 1
            throw MigrationError(.invalidFile, "\(file):\(line): a NUL byte; PostgreSQL would stop reading there and apply only what comes before it")
        }
        var sections: [String: Section] = [:]
        var current: String?
        // `isNewline`, not "\n": Swift reads "\r\n" as one Character, which "\n" never matches.
        for (index, rawLine) in contents.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.hasPrefix("-- migrate:") {
                let words = line.dropFirst("-- migrate:".count).split(separator: " ").map(String.init)
                guard let kind = words.first, ["up", "down"].contains(kind), sections[kind] == nil else {
                    throw MigrationError(.invalidFile, "\(file):\(index + 1): unexpected marker \"\(line)\"; expected one -- migrate:up and at most one -- migrate:down")
                }
                sections[kind] = Section(line: index + 2, inTransaction: !words.contains("transaction:false"))
                current = kind
            } else if let current {
                sections[current]!.sql += rawLine + "\n"
            } else if !line.isEmpty, !line.hasPrefix("--") {
                throw MigrationError(.invalidFile, "\(file):\(index + 1): SQL before the -- migrate:up marker")
            }
        }
        guard let up = sections["up"] else { throw MigrationError(.invalidFile, "\(file): no -- migrate:up section") }
        self.up = up.trimmed()
        self.down = sections["down"].map { $0.trimmed() }.flatMap { $0.sql.isEmpty ? nil : $0 }
    }
}

private extension MigrationSections.Section {
    func trimmed() -> Self {
        var copy = self
        while let last = copy.sql.last, last.isWhitespace { copy.sql.removeLast() }
        return copy
    }
}

extension Migration {
    /// Refuses transaction-control statements (`COMMIT`, `ROLLBACK`, `SAVEPOINT`…) at statement
    /// level in a section that runs in a transaction: they would commit part of the migration
    /// without its history row, or undo part of it while it is recorded as applied.
    func checkTransactionControl() throws {
        for (sql, line, inTransaction, marker) in [(up, upLine, upRunsInTransaction, "up"), (down ?? "", downLine, downRunsInTransaction, "down")] where inTransaction {
            for statement in SQLStatements.split(sql) {
                guard let command = statement.transactionControl else { continue }
                throw MigrationError(.invalidFile, "\(source):\(line + statement.line): \(command) in a section that runs in a transaction would commit or undo part of the migration behind the history's back; remove it, or mark the section `-- migrate:\(marker) transaction:false`")
            }
        }
    }
}
