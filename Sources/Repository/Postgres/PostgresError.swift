/// An error reported by PostgreSQL or by the connection to it.
///
/// Server errors carry the SQLSTATE and the diagnostic fields the server sent; every error
/// carries the statement it concerns when there is one. No message ever contains a password.
public struct PostgresError: Error, Sendable, Hashable {
    /// What went wrong, broadly: one of the kinds below.
    ///
    /// A struct rather than an enum, so that a kind added in a later version is not a source
    /// break: compare with `==`, or `switch` over the kinds with a `default:`.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Name: String, Sendable, Hashable {
            case invalidConfiguration, connectionFailed, connectionLost, server, invalidParameter, invalidStatement, closed
        }

        private let name: Name
        private init(_ name: Name) { self.name = name }

        /// The connection string or URL is malformed, or libpq refused one of its settings
        /// (`sslmode=bogus`, `port=abc`) when connecting.
        public static let invalidConfiguration = Kind(.invalidConfiguration)
        /// The connection could not be established (server down, wrong host, authentication…).
        public static let connectionFailed = Kind(.connectionFailed)
        /// The connection broke while in use (server shut down, backend terminated, network).
        public static let connectionLost = Kind(.connectionLost)
        /// The server rejected a statement; see ``PostgresError/sqlState``.
        public static let server = Kind(.server)
        /// A parameter could not be sent (for example a string containing a NUL character).
        public static let invalidParameter = Kind(.invalidParameter)
        /// The statement's text could not be sent as it is (it contains a NUL character).
        public static let invalidStatement = Kind(.invalidStatement)
        /// The pool or connection was closed.
        public static let closed = Kind(.closed)

        /// The kind's name, as written above (`connectionLost`).
        public var description: String { name.rawValue }
    }

    /// What went wrong, broadly.
    public var kind: Kind
    /// The primary message: the server's, or libpq's, or this library's.
    public var message: String
    /// The five-character SQLSTATE code (`23505` for a unique violation), for server errors.
    public var sqlState: String?
    /// The server's severity (`ERROR`, `FATAL`, …), for server errors.
    public var severity: String?
    /// Secondary detail from the server, such as the conflicting key.
    public var detail: String?
    /// The server's suggestion for fixing the problem.
    public var hint: String?
    /// The 1-based character offset of the error in ``statement``, for syntax errors.
    public var position: Int?
    /// The statement that failed, if any.
    public var statement: String?
    /// The schema, table, column and constraint the server named, if any.
    public var schema: String?, table: String?, column: String?, constraint: String?
    /// Whether the statement certainly never reached the server, so running it again cannot
    /// apply it twice.
    public var statementWasNotSent: Bool = false
    /// Whether nothing the statement does took effect, so running it again cannot apply it twice:
    /// it never reached the server (``statementWasNotSent``); or the server ended the connection
    /// before starting it — a backend told to end (`pg_terminate_backend`, a shutdown,
    /// `idle_session_timeout`) answered what was sent ahead of the statement with its `FATAL`;
    /// or it is a `BEGIN`, which changes nothing by itself, on a connection that was lost.
    public var statementDidNotRun: Bool { statementWasNotSent || endedBeforeStatement }
    /// The server ended the connection before the statement started, or the statement is a lost `BEGIN`.
    var endedBeforeStatement = false
    /// The server function that raised the error (`R`), to tell the backend's own errors apart.
    var routine: String?

    /// Creates an error of `kind` with `message`, about `statement` — kept with any password
    /// literal in it hidden (`PASSWORD '***'`), so that no dump of the error holds one.
    public init(_ kind: Kind, _ message: String, statement: String? = nil) {
        self.kind = kind
        self.message = message
        self.statement = statement.map(SQLPasswords.redacted)
    }
}

extension PostgresError {
    /// Well-known SQLSTATE codes.
    public enum Code {
        /// `23505`: a unique constraint was violated.
        public static let uniqueViolation = "23505"
        /// `23503`: a foreign key constraint was violated.
        public static let foreignKeyViolation = "23503"
        /// `23502`: NULL was written into a NOT NULL column.
        public static let notNullViolation = "23502"
        /// `23514`: a check constraint was violated.
        public static let checkViolation = "23514"
        /// `42601`: a syntax error.
        public static let syntaxError = "42601"
        /// `42P01`: the table does not exist.
        public static let undefinedTable = "42P01"
        /// `42703`: the column does not exist.
        public static let undefinedColumn = "42703"
        /// `40001`: a serialization failure; retry the transaction.
        public static let serializationFailure = "40001"
        /// `40P01`: a deadlock was detected; retry the transaction.
        public static let deadlockDetected = "40P01"
        /// `57P01`: the server is shutting down or the backend was terminated.
        public static let adminShutdown = "57P01"
        /// `28P01`: the password was wrong.
        public static let invalidPassword = "28P01"
        /// `55P03`: a lock could not be acquired in time.
        public static let lockNotAvailable = "55P03"
        /// `57014`: the statement was cancelled (timeout or request).
        public static let queryCanceled = "57014"
    }
}

extension PostgresError: CustomStringConvertible {
    /// One line for logs: message, SQLSTATE, detail and hint, and the statement (where a syntax
    /// error is in it). The kind is not shown: read ``kind``.
    /// Control characters the server's text holds (a table name with a newline, quoted back in
    /// its message) are escaped; the statement's line breaks and indentation read as one space.
    /// The message, detail and hint are cut at 400 characters each (a long `RAISE` text), so
    /// that the SQLSTATE and the statement still follow within a line of 1,500 or so.
    public var description: String {
        let message = TerminalText.escaped(self.message, limit: 400)
        var text = sqlState.map { "\(message) (SQLSTATE \($0))" } ?? message
        if let detail { text += " — \(TerminalText.escaped(detail, limit: 400))" }
        if let hint { text += " Hint: \(TerminalText.escaped(hint, limit: 400))" }
        if let statement {
            let shown = SQLPasswords.redacted(statement)
            let excerpt = shown.count > 200 ? String(shown.prefix(200)) + "…" : shown
            let line = TerminalText.escaped(excerpt.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }).map { $0.trimmingPrefix(while: \.isWhitespace) }.joined(separator: " "), limit: 2_000)
            text += position.map { " [at character \($0) of: \(line)]" } ?? " [in: \(line)]"
        }
        return text
    }
}
