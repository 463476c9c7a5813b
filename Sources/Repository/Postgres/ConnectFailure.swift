/// What a failed connection attempt's message says, as far as it can be told: libpq gives a
/// failed connection no error fields, only its text, so the server's reason is recognised in
/// its English wording (a server whose `lc_messages` is another language gives none of these).
enum ConnectFailure {
    /// The SQLSTATE the server sent with `message`, where its wording is recognised.
    static func sqlState(of message: String) -> String? {
        let known: [(wording: String, sqlState: String)] = [
            ("password authentication failed", "28P01"),
            ("no pg_hba.conf entry", "28000"),
            ("authentication failed", "28000"),
            ("too many clients", "53300"),
            ("remaining connection slots are reserved", "53300"),
            ("too many connections for", "53300"),
            ("the database system is starting up", "57P03"),
            ("the database system is not yet accepting connections", "57P03"),
            ("the database system is shutting down", "57P03"),
            ("the database system is in recovery mode", "57P03"),
            ("terminating connection due to administrator command", "57P01"),
        ]
        if let match = known.first(where: { message.contains($0.wording) }) { return match.sqlState }
        if message.contains("FATAL:"), message.contains("database \""), message.contains("\" does not exist") { return "3D000" }
        if message.contains("FATAL:"), message.contains("role \""), message.contains("\" does not exist") { return "28000" }
        return nil
    }

    /// Whether libpq refused a setting of the connection string itself — `sslmode=bogus`,
    /// `port=abc`, three ports for two hosts — before reaching any server: its own messages,
    /// which do not depend on the server's language.
    static func refusesSetting(_ message: String) -> Bool {
        message.hasPrefix("invalid ") || message.hasPrefix("could not match ") || message.contains("\" for connection option \"")
    }

    /// The refusals that come again however often the attempt is made: a wrong password, a
    /// role or database that does not exist, no `pg_hba.conf` entry.
    static let permanent: Set<String> = ["28P01", "28000", "3D000"]

    /// Whether an attempt that failed with `error` may succeed if made again soon. One the
    /// server refused for a reason that does not change (``permanent``) fails the same way
    /// again, and each attempt counts against the account where the server checks passwords
    /// elsewhere (LDAP locks accounts after a few): it is not repeated. Anything else — a full
    /// or starting server, no answer, a reason not recognised (a server whose messages are in
    /// another language) — may pass.
    static func isWorthRetrying(_ error: any Error) -> Bool {
        if let error = error as? PostgresError, error.kind == .invalidConfiguration { return false }  // a setting libpq refused
        guard let error = error as? PostgresError, error.kind == .connectionFailed else { return true }
        guard let sqlState = error.sqlState ?? sqlState(of: error.message) else { return true }
        return !permanent.contains(sqlState)
    }
}
