/// The tokens of a live query's `where:` condition, as PostgreSQL's lexer reads them: quoted
/// literals, quoted names, dollar-quoted bodies and comments are recognised whole, so that a
/// `$1` inside one is never taken for a parameter.
enum ConditionToken: Equatable {
    /// An unquoted word, folded to lower case (a keyword or a name).
    case word(String)
    /// A double-quoted name, exactly as written.
    case quotedName(String)
    /// `$n`.
    case parameter(Int)
    /// A `'…'` literal's text.
    case string(String)
    /// A number as written.
    case number(String)
    /// An operator or punctuation: `=`, `<>`, `!=`, `<`, `<=`, `>`, `>=`, `(`, `)`, `,`, `.`,
    /// or any other run of operator characters.
    case symbol(String)
    /// Something this reader keeps whole but does not interpret: an `E'…'` or dollar-quoted
    /// literal, a `B'…'`/`X'…'` bit string.
    case opaque
}

enum ConditionLexer {
    private static let operatorCharacters = Set("+-*/<>=~!@#%^&|`?".unicodeScalars)

    /// The tokens of `sql`; nil when a quote, a quoted name, a comment or a dollar-quoted body
    /// is not closed.
    static func tokens(_ sql: String) -> [ConditionToken]? {
        var tokens: [ConditionToken] = []
        let ok = scan(sql) { token, _ in tokens.append(token) }
        return ok ? tokens : nil
    }

    /// `sql` with every parameter `$n` renumbered `$(n + offset)`; nil when it cannot be read.
    static func renumbered(_ sql: String, by offset: Int) -> String? {
        guard offset != 0 else { return sql }
        let characters = Array(sql.unicodeScalars)
        var result = ""
        var copied = 0
        var overflowed = false
        let ok = scan(sql) { token, range in
            guard case .parameter(let number) = token else { return }
            let (renumbered, overflow) = number.addingReportingOverflow(offset)
            overflowed = overflowed || overflow
            result += text(characters[copied..<range.lowerBound]) + "$\(renumbered)"
            copied = range.upperBound
        }
        guard ok, !overflowed else { return nil }
        return result + text(characters[copied...])
    }

    /// Calls `emit` with each token and its range of Unicode scalars; false when something is
    /// not closed. Scalars, as PostgreSQL reads bytes: as `Character`s, a quote followed by a
    /// combining mark would be one character, not a quote.
    private static func scan(_ sql: String, _ emit: (ConditionToken, Range<Int>) -> Void) -> Bool {
        let c = Array(sql.unicodeScalars)
        var i = 0
        func at(_ index: Int) -> Unicode.Scalar? { index < c.count ? c[index] : nil }
        while i < c.count {
            let start = i
            let ch = c[i]
            if ch.properties.isWhitespace { i += 1; continue }
            if ch == "-", at(i + 1) == "-" {
                while i < c.count, c[i] != "\n" { i += 1 }
                continue
            }
            if ch == "/", at(i + 1) == "*" {
                var depth = 0
                repeat {
                    if c[i] == "/", at(i + 1) == "*" { depth += 1; i += 2 } else if c[i] == "*", at(i + 1) == "/" { depth -= 1; i += 2 } else { i += 1 }
                } while depth > 0 && i < c.count
                if depth > 0 { return false }
                continue
            }
            if ch == "'" {
                guard let (text, end) = quoted(c, from: i, quote: "'") else { return false }
                i = end
                emit(.string(text), start..<i)
                continue
            }
            if ch == "\"" {
                guard let (text, end) = quoted(c, from: i, quote: "\"") else { return false }
                i = end
                emit(.quotedName(text), start..<i)
                continue
            }
            if "eEbBxXuU".unicodeScalars.contains(ch), at(i + 1) == "'" || (ch == "u" || ch == "U") && at(i + 1) == "&" {
                // E'…' (backslash escapes), B'…', X'…', U&'…': kept whole.
                i += ch == "u" || ch == "U" ? 2 : 1
                if at(i) == "\"" { guard let (_, end) = quoted(c, from: i, quote: "\"") else { return false }; i = end; emit(.opaque, start..<i); continue }
                guard at(i) == "'" else { continue }
                i += 1
                while i < c.count, c[i] != "'" || at(i + 1) == "'" {
                    if c[i] == "\\" || c[i] == "'" { i += 1 }
                    i += 1
                }
                guard i < c.count else { return false }
                i += 1
                emit(.opaque, start..<i)
                continue
            }
            if ch == "$" {
                if let digit = at(i + 1), isDigit(digit) {
                    i += 1
                    while let d = at(i), isDigit(d) { i += 1 }
                    // A number past Int is a parameter no query has: one the caller refuses.
                    emit(.parameter(Int(text(c[(start + 1)..<i])) ?? Int.max), start..<i)
                    continue
                }
                // A dollar-quoted body: $tag$ … $tag$.
                var end = i + 1
                while let t = at(end), isIdentifierStart(t) || isDigit(t) { end += 1 }
                guard at(end) == "$" else { i += 1; emit(.symbol("$"), start..<i); continue }
                let tag = Array(c[i...end])
                i = end + 1
                while i + tag.count <= c.count, Array(c[i..<(i + tag.count)]) != tag { i += 1 }
                guard i + tag.count <= c.count else { return false }
                i += tag.count
                emit(.opaque, start..<i)
                continue
            }
            if isIdentifierStart(ch) {
                while let w = at(i), isIdentifierStart(w) || isDigit(w) || w == "$" { i += 1 }
                emit(.word(asciiLowercased(text(c[start..<i]))), start..<i)
                continue
            }
            if isDigit(ch) || (ch == "." && at(i + 1).map(isDigit) ?? false) {
                while let d = at(i), isDigit(d) || d == "." || d == "e" || d == "E" || d == "_"
                    || ((d == "+" || d == "-") && (c[i - 1] == "e" || c[i - 1] == "E")) { i += 1 }
                emit(.number(text(c[start..<i])), start..<i)
                continue
            }
            if "(),.;[]:".unicodeScalars.contains(ch) {
                i += 1
                if ch == ":", at(i) == ":" { i += 1 }
                emit(.symbol(text(c[start..<i])), start..<i)
                continue
            }
            if operatorCharacters.contains(ch) {
                while let o = at(i), operatorCharacters.contains(o) {
                    if (o == "-" && at(i + 1) == "-") || (o == "/" && at(i + 1) == "*") { break }
                    i += 1
                }
                emit(.symbol(text(c[start..<i])), start..<i)
                continue
            }
            i += 1
            emit(.opaque, start..<i)
        }
        return true
    }

    /// `word` with ASCII letters in lower case: PostgreSQL folds unquoted names so (in UTF-8
    /// databases, other letters stay as they are).
    private static func asciiLowercased(_ word: String) -> String {
        String(decoding: word.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
    }

    /// Letters, `_`, and every scalar beyond ASCII start a name, as in PostgreSQL's lexer.
    private static func isIdentifierStart(_ scalar: Unicode.Scalar) -> Bool {
        !scalar.isASCII || scalar == "_" || ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
    }

    private static func isDigit(_ scalar: Unicode.Scalar) -> Bool { ("0"..."9").contains(scalar) }

    private static func text(_ scalars: ArraySlice<Unicode.Scalar>) -> String {
        var text = String.UnicodeScalarView()
        text.append(contentsOf: scalars)
        return String(text)
    }

    /// A `'…'` or `"…"` token starting at `start`: its text (doubled quotes undoubled) and where it ends.
    private static func quoted(_ c: [Unicode.Scalar], from start: Int, quote: Unicode.Scalar) -> (String, Int)? {
        var text = String.UnicodeScalarView()
        var i = start + 1
        while i < c.count {
            if c[i] == quote {
                if i + 1 < c.count, c[i + 1] == quote {
                    text.append(quote)
                    i += 2
                    continue
                }
                return (String(text), i + 1)
            }
            text.append(c[i])
            i += 1
        }
        return nil
    }
}
