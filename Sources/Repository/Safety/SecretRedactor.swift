import CPostgres
import Foundation

/// Finds passwords wherever they can enter a program — a URL's user-info (any encoding,
/// malformed or not), `password=` in a URL's query or a conninfo string, `PGPASSWORD`,
/// command-line arguments — and removes them from text that is shown: the password as given and
/// percent-decoded, wherever they appear, and every piece of it between the delimiters URL and
/// conninfo parsing split on, since a parser's complaint ("invalid integer value "Pwx" for
/// connection option "port"") may quote just a piece — a piece where it stands apart from
/// letters and digits, so that a password holding `ss` leaves `sslmode` whole.
///
/// ```swift
/// let redactor = SecretRedactor(scanning: CommandLine.arguments, environment: ProcessInfo.processInfo.environment)
/// print(redactor.redact(error.localizedDescription))
/// ```
public struct SecretRedactor: Sendable {
    /// What to remove wherever it appears, longest first (so that a part never hides the rest).
    private var secrets: [String] = []
    /// Pieces of them, removed where they stand apart from letters and digits; longest first.
    private var pieces: [String] = []

    /// A redactor that removes nothing yet.
    public init() {}

    /// A redactor for the secrets in `texts` (URLs, conninfo strings, arguments) and in the
    /// environment's `DATABASE_URL` and `PGPASSWORD`.
    public init(scanning texts: [String], environment: [String: String] = [:]) {
        for text in texts { scan(text) }
        if let url = environment["DATABASE_URL"] { scan(url) }
        if let password = environment["PGPASSWORD"] { add(password) }
    }

    /// Adds the passwords found in `text`: a URL's user-info password, and any `password=` value.
    public mutating func scan(_ text: String) {
        for password in Self.userInfoPasswords(in: text) { add(password) }
        for password in Self.passwordAssignments(in: text) { add(password) }
    }

    /// Adds `secret`, its percent-decoded form, and its pieces between delimiters.
    public mutating func add(_ secret: String) {
        guard !secret.isEmpty else { return }
        var found: Set<String> = [secret]
        if let decoded = secret.removingPercentEncoding { found.insert(decoded) }
        var parts: Set<String> = []
        for variant in found {
            for piece in variant.split(whereSeparator: { "@:/?#&=;, '\"".contains($0) }) where piece.count >= 2 {
                parts.insert(String(piece))
            }
        }
        secrets = Self.longestFirst(Set(secrets).union(found))
        pieces = Self.longestFirst(Set(pieces).union(parts.subtracting(secrets)))
    }

    /// `text` with every known secret replaced by `***`: wherever it appears — or, for a
    /// password shorter than ``wordLength`` characters, where it stands apart from letters and
    /// digits (as a piece does), so that the password `app` leaves `applied` whole.
    public func redact(_ text: String) -> String {
        let whole = secrets.reduce(text) { text, secret in
            secret.count < Self.wordLength ? Self.replacingStandalone(secret, in: text) : text.replacingOccurrences(of: secret, with: "***")
        }
        return pieces.reduce(whole) { text, piece in Self.replacingStandalone(piece, in: text) }
    }

    /// Passwords this long or longer are removed also inside words: one that long found in a
    /// word is the password, not a word that happens to hold it.
    public static let wordLength = 8

    private static func longestFirst(_ texts: Set<String>) -> [String] {
        texts.sorted { $0.count > $1.count || ($0.count == $1.count && $0 < $1) }
    }

    /// `text` with `piece` replaced by `***` where no letter or digit touches it.
    private static func replacingStandalone(_ piece: String, in text: String) -> String {
        func touches(_ character: Character) -> Bool { character.isLetter || character.isNumber }
        var output = ""
        var copied = text.startIndex
        var searchFrom = text.startIndex
        while let found = text.range(of: piece, range: searchFrom..<text.endIndex) {
            let apart = (found.lowerBound == text.startIndex || !touches(text[text.index(before: found.lowerBound)]))
                && (found.upperBound == text.endIndex || !touches(text[found.upperBound]))
            guard apart else {
                searchFrom = text.index(after: found.lowerBound)
                continue
            }
            output += text[copied..<found.lowerBound] + "***"
            (copied, searchFrom) = (found.upperBound, found.upperBound)
        }
        return output + text[copied...]
    }

    /// The password parts of a URL's user-info, found without a URL parser so that malformed
    /// URLs count too: after `://` and the first `:`, up to the last `@` before any query or
    /// fragment — and, for a password written raw (holding `?`, `#`, `/` or `@`), up to the
    /// last `@` of the whole text.
    private static func userInfoPasswords(in text: String) -> [String] {
        guard let scheme = text.range(of: "://") else { return schemelessPasswords(in: text) }
        let rest = text[scheme.upperBound...]
        let beforeQuery = rest.prefix { $0 != "?" && $0 != "#" }
        var found = [beforeQuery, rest].compactMap { part -> String? in
            guard let at = part.lastIndex(of: "@"), let colon = part[..<at].firstIndex(of: ":") else { return nil }
            return String(part[part.index(after: colon)..<at])
        }
        // `scheme://user:secret` with its `@host` left out: libpq reads the secret as a port, and
        // quotes it in its complaint. A port is up to 65535; anything else after the one colon of
        // a single host is taken for a password (hosts listed with commas, and `[IPv6]`, are not).
        let authority = beforeQuery.prefix { $0 != "/" }
        if !authority.contains("@"), !authority.contains(","), !authority.hasPrefix("["),
           authority.filter({ $0 == ":" }).count == 1, let colon = authority.firstIndex(of: ":") {
            let port = authority[authority.index(after: colon)...]
            if !port.isEmpty, !port.allSatisfy({ $0.isASCII && $0.isNumber }) || Int(port).map({ $0 > 65535 }) ?? true {
                found.append(String(port))
            }
        }
        return found
    }

    /// The same for a URL whose scheme is missing or malformed (`user:pw@host/db`,
    /// `//user:pw@host`, `postgres:/user:pw@host`), which libpq quotes whole in its complaint:
    /// the user-info precedes the last `@`, after the last `/` before it (or, for a raw password
    /// holding `/`, after the first). Text with spaces or `=` there is a conninfo string, left to
    /// ``passwordAssignments(in:)``.
    private static func schemelessPasswords(in text: String) -> [String] {
        let beforeQuery = text.prefix { $0 != "?" && $0 != "#" }
        guard let at = beforeQuery.lastIndex(of: "@") else { return [] }
        let head = beforeQuery[..<at]
        guard !head.contains(where: { $0.isWhitespace || $0 == "=" }) else { return [] }
        let starts = [head.lastIndex(of: "/"), head.firstIndex(of: "/")].map { $0.map(head.index(after:)) ?? head.startIndex }
        return Set(starts).compactMap { start in
            guard let colon = head[start...].firstIndex(of: ":") else { return nil }
            return String(head[head.index(after: colon)...])
        }.filter { !$0.isEmpty }
    }

    /// Whether `text` is a URL with user-info (`scheme://…@`), which may hold a password.
    static func hasUserInfo(_ text: String) -> Bool {
        guard let scheme = text.range(of: "://") else { return false }
        return text[scheme.upperBound...].contains("@")
    }

    /// Every `password=value` (URL query or conninfo; quoted, unterminated or plain).
    private static func passwordAssignments(in text: String) -> [String] {
        var values: [String] = []
        var remaining = text[...]
        while let range = remaining.range(of: #"(?i)(^|[\s?&;])(ssl)?password\s*=\s*"#, options: .regularExpression) {
            var value = remaining[range.upperBound...]
            if value.hasPrefix("'") {
                value = value.dropFirst()
                var end = value.startIndex
                while end < value.endIndex, value[end] != "'" {
                    end = value[end] == "\\" && value.index(after: end) < value.endIndex ? value.index(end, offsetBy: 2) : value.index(after: end)
                }
                values.append(String(value[..<end]).replacingOccurrences(of: "\\'", with: "'"))
                values.append(String(value[..<end]))
                remaining = end < value.endIndex ? value[value.index(after: end)...] : ""
            } else {
                let end = value.firstIndex { $0.isWhitespace || $0 == "&" || $0 == "#" } ?? value.endIndex
                values.append(String(value[..<end]))
                // A password written with a space, unquoted, ends for libpq at the space, which
                // then quotes what follows ("missing "=" after "tail""): up to the next keyword,
                // all of it is the password as its writer meant it.
                let meant = Self.upToNextKeyword(value)
                if meant != value[..<end] { values.append(meant) }
                remaining = value[end...]
            }
        }
        return values
    }

    /// `value` up to where a connection keyword of libpq's (`dbname=`, `port =`…) follows
    /// whitespace, trailing whitespace dropped — and never past a URL query's `&` or `#`.
    private static func upToNextKeyword(_ value: Substring) -> String {
        let words = value.prefix { $0 != "&" && $0 != "#" }.split(whereSeparator: \.isWhitespace)
        var kept: [Substring] = []
        for (index, word) in words.enumerated() {
            let name = word.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0]
            let assigns = word.contains("=") || (index + 1 < words.count && words[index + 1].hasPrefix("="))
            if index > 0, assigns, connectionKeywords.contains(String(name).lowercased()) { break }
            kept.append(word)
        }
        return kept.joined(separator: " ")
    }

    /// libpq's connection keywords (`host`, `port`, `dbname`…).
    private static let connectionKeywords: Set<String> = {
        guard let defaults = PQconndefaults() else { return ["host", "hostaddr", "port", "dbname", "user", "password", "sslmode", "options"] }
        defer { PQconninfoFree(defaults) }
        var names: Set<String> = []
        var option = defaults
        while let keyword = option.pointee.keyword {
            names.insert(String(cString: keyword))
            option += 1
        }
        return names
    }()
}
