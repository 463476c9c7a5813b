internal import CPostgres
public import Foundation

/// Where and how to connect to PostgreSQL.
///
/// Accepts everything libpq accepts — a `postgres://` or `postgresql://` URL (a unix socket is
/// `?host=/path/to/dir`), or a `key=value` conninfo string — and validates it up front.
/// The password is kept out of every description, mirror and error message.
public struct ConnectionConfiguration: Sendable {
    /// The URL or conninfo string as given. Private because it may hold a password.
    private let connectionString: String
    /// Removes the passwords this configuration knows of from messages.
    private var redactor: SecretRedactor
    /// Keyword overrides applied after the connection string (later keywords win in libpq).
    private var overrides: [(key: String, value: String)] = []

    /// The `application_name` reported to the server, unless the connection string sets one.
    public var applicationName: String = "swift-repository"
    /// Seconds to wait for a connection before giving up, unless the connection string sets
    /// `connect_timeout` (see ``connectTimeoutInEffect``).
    public var connectTimeout: Int = 10
    /// How long sent data may stay unacknowledged before a TCP connection counts as dead
    /// (`tcp_user_timeout`); with the keep-alives (after 10 s idle, every 5 s, 3 probes) a
    /// silent network partition is noticed within about 25 s. Unix sockets ignore both.
    public var tcpUserTimeout: Duration = .seconds(20)
    /// The longest a statement may run before the server cancels it (`statement_timeout`), in
    /// whole milliseconds, rounded up (so that a limit under one is still one); `.zero` or less
    /// means no limit, as PostgreSQL's 0 does; nil leaves the server's setting. Replaces any
    /// `options` of the connection string.
    public var statementTimeout: Duration?

    /// A configuration from a `postgres://user:password@host:port/database?sslmode=...` URL.
    /// - Throws: ``PostgresError`` with kind ``PostgresError/Kind/invalidConfiguration`` when libpq rejects it.
    public init(url: String) throws {
        guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") else {
            throw PostgresError(.invalidConfiguration, "a database URL must start with postgres:// or postgresql://")
        }
        try self.init(validating: url)
    }

    /// A configuration from a libpq conninfo string such as `host=/tmp dbname=app user=me`.
    public init(conninfo: String) throws {
        try self.init(validating: conninfo)
    }

    /// A configuration from either form, as `DATABASE_URL` may hold it: a URL
    /// (``init(url:)``) when `://` comes before any `=` — a conninfo string begins with
    /// `keyword=`, and may hold `://` in a value (`application_name=x://y`) —, otherwise a
    /// conninfo string (``init(conninfo:)``).
    public init(urlOrConninfo text: String) throws {
        let head = text.prefix { $0 != "=" }
        if head.contains("://") { try self.init(url: text) } else { try self.init(conninfo: text) }
    }

    /// The configuration the environment gives: `DATABASE_URL` when set and not empty (a URL or
    /// a conninfo string), otherwise libpq's own variables — `PGHOST`, `PGHOSTADDR`, `PGPORT`,
    /// `PGDATABASE`, `PGUSER`, `PGPASSWORD`, `PGPASSFILE`, `PGSERVICE`, `PGSSLMODE`,
    /// `PGSSLROOTCERT`, `PGSSLCERT`, `PGSSLKEY`, `PGCONNECT_TIMEOUT`, `PGTARGETSESSIONATTRS`,
    /// `PGCHANNELBINDING`, `PGGSSENCMODE` — as `environment` holds them (not only as the
    /// process's environment does, which libpq would read).
    public static func environment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> ConnectionConfiguration {
        var configuration: ConnectionConfiguration
        if let value = environment["DATABASE_URL"], !value.isEmpty {
            configuration = try ConnectionConfiguration(urlOrConninfo: value)
        } else {
            configuration = try ConnectionConfiguration(conninfo: "")
            for (variable, keyword) in libpqVariables {
                guard let value = environment[variable], !value.isEmpty else { continue }
                configuration = configuration.overriding(keyword, value)
            }
        }
        if let password = environment["PGPASSWORD"] { configuration.redactor.add(password) }
        return configuration
    }

    /// libpq's environment variables and the connection keywords they stand for.
    private static let libpqVariables = [
        ("PGHOST", "host"), ("PGHOSTADDR", "hostaddr"), ("PGPORT", "port"), ("PGDATABASE", "dbname"), ("PGUSER", "user"),
        ("PGPASSWORD", "password"), ("PGPASSFILE", "passfile"), ("PGSERVICE", "service"), ("PGSSLMODE", "sslmode"),
        ("PGSSLROOTCERT", "sslrootcert"), ("PGSSLCERT", "sslcert"), ("PGSSLKEY", "sslkey"), ("PGCONNECT_TIMEOUT", "connect_timeout"),
        ("PGTARGETSESSIONATTRS", "target_session_attrs"), ("PGCHANNELBINDING", "channel_binding"), ("PGGSSENCMODE", "gssencmode"),
    ]

    private init(validating string: String) throws {
        self.connectionString = string
        var redactor = SecretRedactor()
        redactor.scan(string)
        self.redactor = redactor
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(string, &error) else {
            let message = error.map { String(cString: $0) } ?? "invalid connection string"
            PQfreemem(error)
            // libpq quotes the piece of a URL it could not read, which may be any part of a raw
            // password: with user-info in the URL, its message is not shown.
            if SecretRedactor.hasUserInfo(string) {
                if let name = Self.unknownParameter(in: message, of: string) {
                    throw PostgresError(.invalidConfiguration, "invalid connection URL: libpq knows no parameter \"\(name)\" (sslmode, connect_timeout, "
                                        + "application_name, options and the rest of libpq's connection keywords)")
                }
                throw PostgresError(.invalidConfiguration, "invalid connection URL (libpq's message is not shown: it may quote the password); "
                                    + "percent-encode @ : / ? # % & = and spaces in the user name and password")
            }
            // Likewise a `password=` setting: libpq quotes what follows a space in an unquoted
            // value (`password=S3cret tail` fails with `missing "=" after "tail"`).
            if string.range(of: "password", options: .caseInsensitive) != nil {
                throw PostgresError(.invalidConfiguration, "invalid connection string (libpq's message is not shown: it may quote the password); "
                                    + "each setting must be one of libpq's keywords (host, port, dbname, user, password, sslmode…) as keyword=value, "
                                    + "a value holding spaces, quotes or backslashes in single quotes: password='my secret', with \\' and \\\\ inside")
            }
            throw PostgresError(.invalidConfiguration, redactor.redact(Connection.tidy(message)))
        }
        PQconninfoFree(options)
    }

    /// The parameter libpq named in `message` as unknown, when it is a plain name (letters,
    /// digits, `_`) that `url`'s query gives and its user-info does not hold: then showing it
    /// cannot show a piece of the password.
    private static func unknownParameter(in message: String, of url: String) -> String? {
        guard let match = message.firstMatch(of: #/invalid URI query parameter: "([A-Za-z0-9_]{1,64})"/#) else { return nil }
        let name = String(match.1)
        let afterScheme = url.range(of: "://").map { url[$0.upperBound...] } ?? url[...]
        let userInfo = afterScheme.lastIndex(of: "@").map { afterScheme[..<$0] } ?? ""
        guard !userInfo.contains(name), url.contains("?\(name)=") || url.contains("&\(name)=") else { return nil }
        return name
    }

    /// A configuration from keyword/value pairs that need no validation (paths, numbers, names).
    init(parameters: [(key: String, value: String)]) {
        self.connectionString = ""
        self.redactor = SecretRedactor()
        self.overrides = parameters
    }

    /// The seconds libpq waits for a connection, which also bound how long the pool waits for
    /// one (see ``Database``): a positive `connect_timeout` set by the connection string (or an
    /// override), 2 at the least as libpq counts it; otherwise ``connectTimeout``. A
    /// `connect_timeout` of 0 lets libpq wait without bound, but not the pool: it waits for
    /// ``connectTimeout`` then.
    public var connectTimeoutInEffect: Int {
        let given = overrides.last { $0.key == "connect_timeout" }?.value ?? parsed(connectionString)["connect_timeout"]
        guard let seconds = given.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }), seconds > 0 else { return connectTimeout }
        return max(seconds, 2)
    }

    /// The database this configuration names, if it names one (libpq's default is the user's name).
    public var databaseName: String? {
        overrides.last { $0.key == "dbname" }?.value ?? described(connectionString).database
    }

    /// A copy that connects to another database on the same server.
    public func database(_ name: String) -> ConnectionConfiguration {
        overriding("dbname", name)
    }

    /// A copy that connects as another role, with `password` — or with none when it is nil, so
    /// the original role's password is never offered for another role.
    public func user(_ name: String, password: String? = nil) -> ConnectionConfiguration {
        var copy = overriding("user", name)
        copy.overrides.append(("password", password ?? ""))
        if let password { copy.redactor.add(password) }
        return copy
    }

    func overriding(_ key: String, _ value: String) -> ConnectionConfiguration {
        var copy = self
        copy.overrides.removeAll { $0.key == key }
        copy.overrides.append((key, value))
        return copy
    }

    /// Keyword/value pairs for `PQconnectdbParams` with `expand_dbname = 1`: defaults first,
    /// then the connection string (expanded in place of `dbname`), then overrides.
    func connectParameters(keepalives: Bool = true) -> [(key: String, value: String)] {
        var parameters: [(key: String, value: String)] = [
            ("fallback_application_name", applicationName),
            ("connect_timeout", String(connectTimeout)),
        ]
        if keepalives {
            parameters += [("keepalives", "1"), ("keepalives_idle", "10"), ("keepalives_interval", "5"), ("keepalives_count", "3"),
                           ("tcp_user_timeout", String(Self.milliseconds(tcpUserTimeout)))]
        }
        parameters.append(("dbname", connectionString))
        if let statementTimeout {
            parameters.append(("options", "-c statement_timeout=\(Self.limitMilliseconds(statementTimeout))"))
        }
        return parameters + overrides
    }

    /// `duration` as a server's limit in milliseconds: rounded up, so that a positive limit
    /// is never 0 (which the server reads as none); 0 for none or less.
    static func limitMilliseconds(_ duration: Duration) -> Int64 {
        guard duration > .zero else { return 0 }
        let whole = milliseconds(duration)
        return .milliseconds(whole) < duration ? whole + 1 : whole
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// Replaces every known password (and every piece of one) in `message` with `***`.
    func redact(_ message: String) -> String {
        redactor.redact(message)
    }
}

extension ConnectionConfiguration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A URL-like summary with no password, e.g. `postgres://app@localhost:5432/app`.
    public var description: String {
        var target = described(connectionString)
        for (key, value) in overrides {
            switch key {
            case "user": target.user = value
            case "dbname": target.database = value
            case "host": target.host = value
            case "port": target.port = value
            default: break
            }
        }
        let user = target.user.map { "\($0)@" } ?? ""
        let port = target.port.map { ":\($0)" } ?? ""
        // An IPv6 address in brackets, as a URL writes it (`[::1]:5432`); not a socket directory.
        let host = target.host.map { $0.contains(":") && !$0.hasPrefix("/") && !$0.hasPrefix("[") ? "[\($0)]" : $0 } ?? "default"
        // A malformed URL may put pieces of its password where a host or port should be.
        return redactor.redact("postgres://\(user)\(host)\(port)/\(target.database ?? "")")
    }

    /// Same as ``description``: never shows the password.
    public var debugDescription: String { "ConnectionConfiguration(\(description))" }

    /// A mirror that shows the redacted description, so `dump` cannot reveal the password.
    public var customMirror: Mirror { Mirror(self, children: ["target": description]) }

    private func described(_ string: String) -> (user: String?, host: String?, port: String?, database: String?) {
        let fields = parsed(string)
        return (fields["user"], fields["host"] ?? fields["hostaddr"], fields["port"], fields["dbname"])
    }

    /// The keywords a connection string sets, as libpq reads it (empty when it does not parse).
    fileprivate func parsed(_ string: String) -> [String: String] {
        guard let options = PQconninfoParse(string, nil) else { return [:] }
        defer { PQconninfoFree(options) }
        var fields: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { fields[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        return fields
    }
}
