import Foundation

/// Splits SQL text into statements at top-level semicolons, respecting quotes ('…', "…",
/// E'…\'…'), dollar-quoted bodies ($$…$$, $tag$…$tag$), comments (-- …, /* … */, nested),
/// parentheses (a rule's actions, `DO ALSO (…; …)`) and SQL-standard function bodies
/// (BEGIN ATOMIC … END). Text of comments alone is no statement.
///
/// It reads UTF-8 bytes once, front to back — every syntax character is ASCII, and bytes of
/// other characters count as letters of identifiers, as in PostgreSQL's own lexer — so its
/// time grows with the text's length, whatever the number or size of its statements.
enum SQLStatements {
    struct Statement: Equatable {
        /// The statement's text, trimmed.
        var sql: String
        /// The 0-based line of the text on which it starts.
        var line: Int
    }

    static func split(_ sql: String) -> [Statement] {
        var sql = sql
        return sql.withUTF8 { buffer in
            guard let bytes = buffer.baseAddress else { return [] }
            var lexer = SQLLexer(bytes, count: buffer.count)
            var statements: [Statement] = []
            var lines = LineCounter(bytes: bytes, count: buffer.count)
            var start = 0
            var atomicDepth = 0  // inside BEGIN ATOMIC … END, semicolons end no statement
            var parenthesisDepth = 0  // nor inside parentheses (a rule's actions: `DO ALSO (…; …)`)
            var afterBegin = false
            var hasTokens = false  // since `start`: a statement of comments alone is none
            var keyword: SQLLexer.Keyword?  // declared once: an unoptimized build zeroes a loop's locals each turn
            loop: while true {
                let token = lexer.next()
                if token != .semicolon, token != .end { hasTokens = true }
                switch token {
                case .end:
                    break loop
                case .semicolon where atomicDepth == 0 && parenthesisDepth == 0:
                    if hasTokens, let statement = Self.statement(lexer, from: start, to: lexer.tokenStart, lines: &lines) { statements.append(statement) }
                    (start, hasTokens) = (lexer.index, false)
                case .open:
                    parenthesisDepth += 1
                case .close:
                    parenthesisDepth = max(0, parenthesisDepth - 1)
                case .word:
                    keyword = lexer.keyword()
                    switch keyword {
                    case .atomic? where afterBegin: atomicDepth += 1
                    case .case? where atomicDepth > 0: atomicDepth += 1
                    case .end? where atomicDepth > 0: atomicDepth -= 1
                    default: break
                    }
                    if case .begin? = keyword { afterBegin = true } else { afterBegin = false }
                    continue loop
                default:
                    break
                }
                afterBegin = false
            }
            if hasTokens, start < buffer.count, let statement = Self.statement(lexer, from: start, to: buffer.count, lines: &lines) {
                statements.append(statement)
            }
            return statements
        }
    }

    /// The statement between `start` and `end` (a `;` or the end of the text), without the
    /// white space and `--` comments around it; nil when nothing else is there.
    private static func statement(_ lexer: SQLLexer, from start: Int, to end: Int, lines: inout LineCounter) -> Statement? {
        let first = lexer.skipSpaceAndLineComments(from: start, to: end)
        var last = end
        while last > first, SQLLexer.isSpace(lexer.bytes[last - 1]) { last -= 1 }
        guard first < last else { return nil }
        return Statement(sql: String(decoding: UnsafeBufferPointer(start: lexer.bytes + first, count: last - first), as: UTF8.self),
                         line: lines.line(at: first))
    }

    /// Where a statement's own text begins, past the comments before it (`/* … */` ones are
    /// sent with it — a planner hint is one): how many lines in, and the text from there.
    static func afterLeadingComments(_ statement: String) -> (lines: Int, text: Substring) {
        var sql = statement
        let (offset, lines) = sql.withUTF8 { buffer -> (Int, Int) in
            guard let bytes = buffer.baseAddress else { return (0, 0) }
            var lexer = SQLLexer(bytes, count: buffer.count)
            let offset = lexer.next() == .end ? 0 : lexer.tokenStart
            var counter = LineCounter(bytes: bytes, count: buffer.count)
            return (offset, counter.line(at: offset))
        }
        return (lines, statement[statement.utf8.index(statement.startIndex, offsetBy: offset)...])
    }

    /// Why `sql` is not one self-contained expression — a `)` without its `(`, an unclosed `(`,
    /// quote, comment or dollar-quoted body, or a `;` — or nil when it is. Quotes, comments and
    /// dollar-quoted bodies are looked through.
    static func expressionProblem(_ sql: String) -> String? {
        var sql = sql
        return sql.withUTF8 { buffer in
            guard let bytes = buffer.baseAddress else { return nil }
            var lexer = SQLLexer(bytes, count: buffer.count)
            var depth = 0
            var isEmpty = true
            while true {
                let token = lexer.next()
                switch token {
                case .end: return isEmpty ? "no expression at all" : depth > 0 ? "an unclosed (" : nil
                case .unclosed: return "an unclosed \(lexer.unclosed)"
                case .semicolon: return "a ;"
                case .open: depth += 1
                case .close:
                    depth -= 1
                    if depth < 0 { return "a ) without its (" }
                case .word, .other: break
                }
                isEmpty = false
            }
        }
    }
}

/// The 0-based line of increasing byte offsets, counting each line break once in all: `\n`,
/// `\r\n`, and a `\r` alone (a file saved with old Mac line endings).
private struct LineCounter {
    let bytes: UnsafePointer<UInt8>
    let count: Int
    /// Whether the text holds a `\r` at all: without one, lines are found a `memchr` at a time.
    private let hasReturns: Bool
    private var offset = 0
    private var lines = 0

    init(bytes: UnsafePointer<UInt8>, count: Int) {
        (self.bytes, self.count) = (bytes, count)
        hasReturns = memchr(bytes, 0x0D, count) != nil
    }

    mutating func line(at target: Int) -> Int {
        guard hasReturns else {
            // One memchr per line rather than a step per byte.
            while offset < target, let found = memchr(bytes + offset, 0x0A, target - offset) {
                lines += 1
                offset = UnsafeRawPointer(found) - UnsafeRawPointer(bytes) + 1
            }
            offset = max(offset, target)
            return lines
        }
        while offset < target {
            // A \r\n is counted at its \n.
            if bytes[offset] == 0x0A || (bytes[offset] == 0x0D && (offset + 1 >= count || bytes[offset + 1] != 0x0A)) { lines += 1 }
            offset += 1
        }
        return lines
    }
}

extension SQLStatements.Statement {
    /// Whether this statement turns `standard_conforming_strings` off for the session:
    /// `SET [SESSION | LOCAL] standard_conforming_strings = | TO` a value other than `on`,
    /// `true`, `yes`, `1` or `DEFAULT`, or `set_config('standard_conforming_strings', …)` with
    /// `off`, `false`, `no` or `0`. Other statements naming it (`SHOW`, `ALTER DATABASE … SET`,
    /// a comment, a check in a function) leave this session's reading as it is.
    var turnsBackslashEscapesOn: Bool {
        guard sql.range(of: "standard_conforming_strings", options: .caseInsensitive) != nil else { return false }
        let all = Self.words(outsideComments: sql)
        if let call = all.firstIndex(of: "set_config"), call + 2 < all.count, all[call + 1] == "standard_conforming_strings" {
            return ["off", "false", "no", "0"].contains(all[call + 2])
        }
        var words = all[...]
        guard words.popFirst() == "set" else { return false }
        if words.first == "session" || words.first == "local" { words = words.dropFirst() }
        guard words.popFirst() == "standard_conforming_strings" else { return false }
        if words.first == "to" { words = words.dropFirst() }
        return !(words.count == 1 && ["on", "true", "yes", "1", "default"].contains(words.first!))
    }

    /// The statement's words, lower-cased, with comments (`-- …`, `/* … */`) left out.
    private static func words(outsideComments sql: String) -> [Substring] {
        var text = sql.lowercased()
        while let open = text.range(of: "/*") {
            let close = text.range(of: "*/", range: open.upperBound..<text.endIndex)?.upperBound ?? text.endIndex
            text.replaceSubrange(open.lowerBound..<close, with: " ")
        }
        let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }.map { line in
            line.range(of: "--").map { line[..<$0.lowerBound] } ?? line[...]
        }
        return lines.joined(separator: " ").split { !($0.isLetter || $0.isNumber || $0 == "_") }.map { Substring($0) }
    }

    /// The transaction-control command this statement is (`COMMIT`, `ROLLBACK TO SAVEPOINT`…),
    /// if it is one: in a section that runs in a transaction, it would end or bend that
    /// transaction behind the migrator's back.
    var transactionControl: String? {
        var sql = sql
        return sql.withUTF8 { buffer in
            guard let bytes = buffer.baseAddress else { return nil }
            return Self.transactionControl(bytes, count: buffer.count)
        }
    }

    /// The first word (and for `START` and `PREPARE` the second) after leading white space and
    /// comments (`-- …` to the end of the line, `/* … */` nested as PostgreSQL nests them, as
    /// ``SQLLexer`` reads them), compared byte by byte: a few bytes read, nothing allocated,
    /// whatever the statement's length. (Static helpers rather than nested functions: those
    /// would capture, and an unoptimized build checks every access to a captured variable.)
    private static func transactionControl(_ bytes: UnsafePointer<UInt8>, count: Int) -> String? {
        // The lexer's first token: comments and white space are skipped as the splitter skips them.
        var lexer = SQLLexer(bytes, count: count)
        guard lexer.next() == .word else { return nil }
        let first = lexer.tokenStart..<lexer.index
        // The one command this word could be, by its first letter and length; START and PREPARE
        // only with TRANSACTION after them.
        let command: StaticString, needsTransaction: Bool
        switch (bytes[first.lowerBound] & 0xDF, first.count) {
        case (0x42, 5): (command, needsTransaction) = ("BEGIN", false)
        case (0x43, 6): (command, needsTransaction) = ("COMMIT", false)
        case (0x45, 3): (command, needsTransaction) = ("END", false)
        case (0x52, 8): (command, needsTransaction) = ("ROLLBACK", false)
        case (0x52, 7): (command, needsTransaction) = ("RELEASE", false)
        case (0x41, 5): (command, needsTransaction) = ("ABORT", false)
        case (0x53, 9): (command, needsTransaction) = ("SAVEPOINT", false)
        case (0x53, 5): (command, needsTransaction) = ("START", true)
        case (0x50, 7): (command, needsTransaction) = ("PREPARE", true)
        default: return nil
        }
        guard matches(bytes, first, command) else { return nil }
        guard needsTransaction else { return command.description }
        guard lexer.next() == .word else { return nil }
        return matches(bytes, lexer.tokenStart..<lexer.index, "TRANSACTION") ? "\(command) TRANSACTION" : nil
    }

    /// Whether the letters at `range` are `keyword`'s (upper-case ASCII), in any case.
    static func matches(_ bytes: UnsafePointer<UInt8>, _ range: Range<Int>, _ keyword: StaticString) -> Bool {
        guard range.count == keyword.utf8CodeUnitCount else { return false }
        var index = 0
        while index < range.count {
            if bytes[range.lowerBound + index] & 0xDF != keyword.utf8Start[index] { return false }
            index += 1
        }
        return true
    }
}
