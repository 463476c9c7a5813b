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
/// transaction, for statements such as `CREATE INDEX CONCURRENTLY`. An empty
/// `-- migrate:down` section is a rollback that deliberately does nothing; a file without one
/// cannot be rolled back. ``Migrator/init(directory:)`` also reads golang-migrate's, sqlx's
/// and Flyway's layouts (see ``MigrationFileLayout``).
public struct Migration: Sendable, Hashable {
    /// The version: the file name's leading number. Migrations apply in ascending order.
    public let version: MigrationVersion
    /// The name after the version, such as `add_email`.
    public let name: String
    /// The SQL that applies the migration.
    public let up: String
    /// The SQL that undoes it: nil when there is none (the migration cannot be rolled back),
    /// empty when rolling back deliberately does nothing.
    public let down: String?
    /// Whether ``up`` runs in a transaction together with its history row (the default).
    public let upRunsInTransaction: Bool
    /// Whether ``down`` runs in a transaction together with deleting its history row.
    public let downRunsInTransaction: Bool
    /// Where the migration came from (a file path, or a name for migrations built in code).
    public let source: String
    /// Where ``down`` came from: ``source``, or a file of its own (`0007_x.down.sql`, `U7__x.sql`).
    public let downSource: String
    /// The 1-based line of ``source`` on which ``up`` starts, to point errors at the file.
    public let upLine: Int
    /// The 1-based line of ``downSource`` on which ``down`` starts.
    public let downLine: Int
    /// SHA-256 of ``up`` with line endings normalized, so CRLF and LF copies of a file have the
    /// same checksum.
    public let checksum: String
    /// Whether each section is a whole file (golang-migrate's, sqlx's, Flyway's layouts).
    let sectionsAreWholeFiles: Bool

    /// A migration built in code rather than read from a file.
    public init(version: MigrationVersion, name: String, up: String, down: String? = nil,
                upRunsInTransaction: Bool = true, downRunsInTransaction: Bool = true) {
        let source = "\(version)_\(name)"
        self.init(version: version, name: name, up: MigrationSections.Section(sql: up, line: 1, inTransaction: upRunsInTransaction),
                  down: down.map { MigrationSections.Section(sql: $0, line: 1, inTransaction: downRunsInTransaction) },
                  source: source, downSource: source)
    }

    /// Parses a migration file's contents in dbmate's layout (`-- migrate:up` and
    /// `-- migrate:down` sections).
    /// - Throws: ``MigrationError`` when the name or the sections are malformed.
    public init(fileName: String, path: String? = nil, contents: String) throws {
        guard let (version, name) = Self.versionAndName(fileName) else {
            // Read as another tool's layout, for the reason it refuses the name (a version too long, say).
            _ = try MigrationFileName(fileName)
            throw MigrationError(.invalidFile, "\(fileName): a migration file is named NNNN_name.sql or YYYYMMDDHHMMSS_name.sql")
        }
        let sections = try MigrationSections(marked: contents, file: path ?? fileName)
        self.init(version: MigrationVersion(version), name: name, up: sections.up, down: sections.down,
                  source: path ?? fileName, downSource: path ?? fileName)
    }

    init(version: MigrationVersion, name: String, up: MigrationSections.Section, down: MigrationSections.Section?,
         source: String, downSource: String, sectionsAreWholeFiles: Bool = false) {
        self.sectionsAreWholeFiles = sectionsAreWholeFiles
        self.version = version
        self.name = name
        self.up = up.sql
        self.down = down?.sql
        self.upRunsInTransaction = up.inTransaction
        self.downRunsInTransaction = down?.inTransaction ?? true
        self.source = source
        self.downSource = downSource
        self.upLine = up.line
        self.downLine = down?.line ?? 1
        // Sections read from files come with their text with "\n" line ends; migrations built in code may not.
        let normalized = up.withNewlines
            ?? (MigrationSections.contains(UInt8(ascii: "\r"), in: up.sql) ? up.sql.replacingOccurrences(of: "\r\n", with: "\n") : up.sql)
        self.checksum = SHA256.hex(normalized)
    }

    /// Whether `fileName` ends in `.sql`, in any case.
    static func isSQLFile(_ fileName: String) -> Bool {
        fileName.lowercased().hasSuffix(".sql")
    }

    /// `0007_add_email.sql` (or `.SQL`) → (7, "add_email"); as dbmate reads names, any name
    /// that starts with digits: `001-init.sql` → (1, "init"), `20240101120000.sql` → (20240101120000, "").
    static func versionAndName(_ fileName: String) -> (Int64, String)? {
        guard isSQLFile(fileName) else { return nil }
        let stem = fileName.dropLast(4)
        let digits = stem.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, digits.count <= 18, let version = Int64(digits) else { return nil }
        return (version, nameAfterVersion(stem.dropFirst(digits.count)))
    }

    /// The name in what follows a file name's version: without the separators before it.
    static func nameAfterVersion(_ rest: Substring) -> String {
        String(rest.drop { $0 == "_" || $0 == "-" || $0 == "." || $0 == " " })
    }
}

extension Migration {
    /// Refuses transaction-control statements (`COMMIT`, `ROLLBACK`, `SAVEPOINT`…) at statement
    /// level in a section that runs in a transaction: they would commit part of the migration
    /// without its history row, or undo part of it while it is recorded as applied.
    func checkTransactionControl() throws {
        let sections = [(up, source, upLine, upRunsInTransaction, "up"), (down ?? "", downSource, downLine, downRunsInTransaction, "down")]
        for (sql, file, line, inTransaction, marker) in sections where inTransaction {
            for statement in Self.statements(sql) {
                guard let command = statement.transactionControl else { continue }
                let wayOut = sectionsAreWholeFiles ? "put `-- no-transaction` on the file's first line" : "mark the section `-- migrate:\(marker) transaction:false`"
                throw MigrationError(.invalidFile, "\(file):\(line + statement.line): \(command) in a section that runs in a transaction would commit or undo part of the migration behind the history's back; remove it, or \(wayOut)")
            }
        }
    }

    /// Refuses, in the section about to run, a statement that would make the run unsafe:
    /// - one that turns `standard_conforming_strings` off for the session: backslashes in `'…'`
    ///   strings would then escape quotes, and later statements would end elsewhere than where
    ///   they are split — a `COMMIT` could run hidden in a string's statement;
    /// - one that releases the session's advisory locks (`DISCARD ALL`,
    ///   `pg_advisory_unlock_all()`, see ``SQLStatements/Statement/releasesSessionLocks``): the
    ///   run's lock with them, so that another run could apply the same migration.
    ///
    /// Checked before a run, not when files are read: a file applied long ago does not stop `status`.
    func checkStatements(down isDown: Bool) throws {
        let (sql, file, line) = isDown ? (down ?? "", downSource, downLine) : (up, source, upLine)
        for statement in SQLStatements.split(sql) {
            if statement.turnsBackslashEscapesOn {
                throw MigrationError(.invalidFile, "\(file):\(line + statement.line): turning standard_conforming_strings off would change where statements end "
                                     + "(backslashes would escape quotes in '…' strings); migrate reads strings as PostgreSQL does by default: remove it, and use E'…' for escapes")
            }
            if let command = statement.releasesSessionLocks {
                throw MigrationError(.invalidFile, "\(file):\(line + statement.line): \(command) would release migrate's advisory lock, and another run could then "
                                     + "apply the same migration; remove it (release the locks you took by name, with pg_advisory_unlock)")
            }
        }
    }

    /// The statements a section that runs in a transaction runs: all of them — but for a
    /// section that wraps itself in one transaction, a plain `BEGIN` first and `COMMIT` (or
    /// `END`) last, as golang-migrate's files often do, the statements between: the migration's
    /// own transaction is that one, and its history row joins it.
    static func statements(_ sql: String) -> [SQLStatements.Statement] {
        let statements = SQLStatements.split(sql)
        guard statements.count >= 2, let first = statements.first, let last = statements.last,
              beginnings.contains(plainCommand(first.sql)), endings.contains(plainCommand(last.sql)) else { return statements }
        return Array(statements.dropFirst().dropLast())
    }

    private static let beginnings: Set = ["BEGIN", "BEGIN TRANSACTION", "BEGIN WORK", "START TRANSACTION"]
    private static let endings: Set = ["COMMIT", "COMMIT TRANSACTION", "COMMIT WORK", "END", "END TRANSACTION", "END WORK"]

    /// A short statement's words in upper case, comments left out: `-- one\nbegin  work` → `BEGIN WORK`.
    private static func plainCommand(_ sql: String) -> String {
        guard sql.utf8.count < 200 else { return "" }
        var text = sql
        while let range = text.range(of: #"--[^\n]*|/\*.*?\*/"#, options: .regularExpression) { text.removeSubrange(range) }
        return text.split(whereSeparator: \.isWhitespace).joined(separator: " ").uppercased()
    }
}

