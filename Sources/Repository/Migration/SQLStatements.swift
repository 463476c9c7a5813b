/// Splits SQL text into statements at top-level semicolons, respecting quotes ('…', "…",
/// E'…\'…'), dollar-quoted bodies ($$…$$, $tag$…$tag$), comments (-- …, /* … */, nested) and
/// SQL-standard function bodies (BEGIN ATOMIC … END).
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
            var lines = LineCounter(bytes: bytes)
            var start = 0
            func flush(upTo end: Int) {
                let first = lexer.skipSpaceAndLineComments(from: start, to: end)
                var last = end
                while last > first, SQLLexer.isSpace(bytes[last - 1]) { last -= 1 }
                if first < last {
                    statements.append(Statement(sql: String(decoding: UnsafeBufferPointer(start: bytes + first, count: last - first), as: UTF8.self),
                                                line: lines.line(at: first)))
                }
                start = end + 1
            }
            var atomicDepth = 0  // inside BEGIN ATOMIC … END, semicolons end no statement
            var afterBegin = false
            while let token = lexer.next() {
                switch token {
                case .semicolon(let at) where atomicDepth == 0:
                    flush(upTo: at)
                case .word(let word):
                    let keyword = lexer.keyword(word)
                    if afterBegin, keyword == .atomic { atomicDepth += 1 }
                    if atomicDepth > 0, keyword == .case { atomicDepth += 1 }
                    if atomicDepth > 0, keyword == .end { atomicDepth -= 1 }
                    afterBegin = keyword == .begin
                    continue
                default:
                    break
                }
                afterBegin = false
            }
            if start < buffer.count { flush(upTo: buffer.count) }
            return statements
        }
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
            while let token = lexer.next() {
                switch token {
                case .unclosed(let what): return "an unclosed \(what)"
                case .semicolon: return "a ;"
                case .open: depth += 1
                case .close:
                    depth -= 1
                    if depth < 0 { return "a ) without its (" }
                case .word, .other: break
                }
            }
            return depth > 0 ? "an unclosed (" : nil
        }
    }
}

/// The 0-based line of increasing byte offsets, counting each newline once in all.
private struct LineCounter {
    let bytes: UnsafePointer<UInt8>
    private var offset = 0
    private var lines = 0

    init(bytes: UnsafePointer<UInt8>) { self.bytes = bytes }

    mutating func line(at target: Int) -> Int {
        while offset < target {
            if bytes[offset] == 0x0A { lines += 1 }  // "\n"
            offset += 1
        }
        return lines
    }
}

extension SQLStatements.Statement {
    /// The transaction-control command this statement is (`COMMIT`, `ROLLBACK TO SAVEPOINT`…),
    /// if it is one: in a section that runs in a transaction, it would end or bend that
    /// transaction behind the migrator's back.
    var transactionControl: String? {
        var sql = sql
        let words = sql.withUTF8 { buffer in buffer.baseAddress.map { Self.leadingWords($0, count: buffer.count) } ?? [] }
        guard let first = words.first else { return nil }
        switch first {
        case "BEGIN", "COMMIT", "END", "ROLLBACK", "ABORT", "SAVEPOINT", "RELEASE":
            return first
        case "START" where words.dropFirst().first == "TRANSACTION", "PREPARE" where words.dropFirst().first == "TRANSACTION":
            return words.joined(separator: " ")
        default:
            return nil
        }
    }

    /// The first two words, upper-cased, after leading block comments: a few bytes read
    /// whatever the statement's length. Nil when the first cannot start transaction control.
    private static func leadingWords(_ bytes: UnsafePointer<UInt8>, count: Int) -> [String] {
        var index = 0
        func isLetter(_ byte: UInt8) -> Bool { byte >= 0x80 || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z")) }
        func startsComment(_ at: Int) -> Bool { at + 1 < count && bytes[at] == UInt8(ascii: "/") && bytes[at + 1] == UInt8(ascii: "*") }
        while index < count, SQLLexer.isSpace(bytes[index]) || startsComment(index) {
            if !startsComment(index) { index += 1; continue }
            index += 2
            while index + 1 < count, !(bytes[index] == UInt8(ascii: "*") && bytes[index + 1] == UInt8(ascii: "/")) { index += 1 }
            index += 2
        }
        // Only B(EGIN), C(OMMIT), E(ND), R(OLLBACK, ELEASE), A(BORT), S(AVEPOINT, TART), P(REPARE):
        // most statements are told apart by their first byte, before anything is allocated.
        guard index < count else { return [] }
        switch bytes[index] & 0xDF {
        case 0x42, 0x43, 0x45, 0x52, 0x41, 0x53, 0x50: break  // B C E R A S P
        default: return []
        }
        var words: [String] = []
        while words.count < 2, index < count {
            while index < count, !isLetter(bytes[index]) { index += 1 }
            let start = index
            while index < count, isLetter(bytes[index]), index - start < 20 { index += 1 }
            if index > start { words.append(String(decoding: UnsafeBufferPointer(start: bytes + start, count: index - start), as: UTF8.self).uppercased()) }
        }
        return words
    }
}
