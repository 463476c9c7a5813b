/// Splits SQL text into statements at top-level semicolons, respecting quotes ('…', "…",
/// E'…\'…'), dollar-quoted bodies ($$…$$, $tag$…$tag$), comments (-- …, /* … */, nested) and
/// SQL-standard function bodies (BEGIN ATOMIC … END).
enum SQLStatements {
    struct Statement: Equatable {
        /// The statement's text, trimmed.
        var sql: String
        /// The 0-based line of the text on which it starts.
        var line: Int
    }

    static func split(_ sql: String) -> [Statement] {
        let characters = Array(sql)
        var statements: [Statement] = []
        var start = 0
        var index = 0
        func flush(upTo end: Int) {
            start = skipLeadingComments(characters, from: start, to: end)
            let text = String(characters[start..<end])
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if !trimmed.isEmpty {
                let leading = text.prefix { $0.isWhitespace }
                let line = characters[0..<start].filter { $0 == "\n" }.count + leading.filter { $0 == "\n" }.count
                statements.append(Statement(sql: trimmed, line: line))
            }
            start = end + 1
        }
        var atomicDepth = 0  // inside BEGIN ATOMIC … END, semicolons end no statement
        var previousWord = ""
        while index < characters.count {
            let character = characters[index]
            let next = index + 1 < characters.count ? characters[index + 1] : nil
            switch character {
            case "'" where previousWord.uppercased() == "E" && index > 0 && characters[index - 1].uppercased() == "E":
                index = skipQuoted(characters, from: index, quote: character, backslashEscapes: true)
            case "'", "\"":
                index = skipQuoted(characters, from: index, quote: character)
            case "-" where next == "-":
                while index < characters.count, characters[index] != "\n" { index += 1 }
            case "/" where next == "*":
                index = skipBlockComment(characters, from: index)
            case "$":
                index = skipDollarQuoted(characters, from: index)
            case ";" where atomicDepth == 0:
                flush(upTo: index)
                index += 1
            case _ where character.isLetter || character == "_":
                let start = index
                while index < characters.count, characters[index].isLetter || characters[index].isNumber || characters[index] == "_" || characters[index] == "$" {
                    index += 1
                }
                let word = String(characters[start..<index]).uppercased()
                if word == "ATOMIC", previousWord == "BEGIN" { atomicDepth += 1 }
                if atomicDepth > 0, word == "CASE" { atomicDepth += 1 }
                if atomicDepth > 0, word == "END" { atomicDepth -= 1 }
                previousWord = word
                continue
            default:
                index += 1
            }
            if !character.isWhitespace { previousWord = "" }
        }
        if start < characters.count { flush(upTo: characters.count) }
        return statements
    }

    /// Why `sql` is not one self-contained expression — a `)` without its `(`, an unclosed `(`,
    /// quote or comment, or a `;` — or nil when it is. Quotes, comments and dollar-quoted
    /// bodies are looked through.
    static func expressionProblem(_ sql: String) -> String? {
        let characters = Array(sql)
        var depth = 0
        var index = 0
        while index < characters.count {
            let character = characters[index]
            let next = index + 1 < characters.count ? characters[index + 1] : nil
            switch character {
            case "'", "\"":
                let end = skipQuoted(characters, from: index, quote: character,
                                     backslashEscapes: character == "'" && index > 0 && characters[index - 1].uppercased() == "E")
                if end >= characters.count, characters.last != character || end - index < 2 { return "an unclosed \(character)" }
                index = end
            case "-" where next == "-":
                while index < characters.count, characters[index] != "\n" { index += 1 }
            case "/" where next == "*":
                index = skipBlockComment(characters, from: index)
            case "$":
                index = skipDollarQuoted(characters, from: index)
            case "(":
                depth += 1
                index += 1
            case ")":
                depth -= 1
                if depth < 0 { return "a ) without its (" }
                index += 1
            case ";":
                return "a ;"
            default:
                index += 1
            }
        }
        return depth > 0 ? "an unclosed (" : nil
    }

    private static func skipQuoted(_ characters: [Character], from start: Int, quote: Character, backslashEscapes: Bool = false) -> Int {
        var index = start + 1
        while index < characters.count {
            if backslashEscapes, characters[index] == "\\" { index += 2; continue }
            if characters[index] == quote {
                // A doubled quote is an escaped quote inside the literal.
                if index + 1 < characters.count, characters[index + 1] == quote { index += 2; continue }
                return index + 1
            }
            index += 1
        }
        return index
    }

    private static func skipBlockComment(_ characters: [Character], from start: Int) -> Int {
        var depth = 0
        var index = start
        while index + 1 < characters.count {
            if characters[index] == "/", characters[index + 1] == "*" { depth += 1; index += 2; continue }
            if characters[index] == "*", characters[index + 1] == "/" {
                depth -= 1
                index += 2
                if depth == 0 { return index }
                continue
            }
            index += 1
        }
        return characters.count
    }

    /// `$tag$ … $tag$`; a `$` that does not open such a quote (`$1`) is skipped alone.
    private static func skipDollarQuoted(_ characters: [Character], from start: Int) -> Int {
        var end = start + 1
        while end < characters.count, characters[end] == "_" || characters[end].isLetter || (end > start + 1 && characters[end].isNumber) {
            end += 1
        }
        guard end < characters.count, characters[end] == "$" else { return start + 1 }
        let tag = Array(characters[start...end])
        var index = end + 1
        while index + tag.count <= characters.count {
            if Array(characters[index..<index + tag.count]) == tag { return index + tag.count }
            index += 1
        }
        return characters.count
    }

    /// The first index at or after `start` that is neither white space nor a `--` comment.
    private static func skipLeadingComments(_ characters: [Character], from start: Int, to end: Int) -> Int {
        var index = start
        while index < end {
            if characters[index].isWhitespace {
                index += 1
            } else if characters[index] == "-", index + 1 < end, characters[index + 1] == "-" {
                while index < end, !characters[index].isNewline { index += 1 }
            } else {
                break
            }
        }
        return index
    }
}

extension SQLStatements.Statement {
    /// The transaction-control command this statement is (`COMMIT`, `ROLLBACK TO SAVEPOINT`…),
    /// if it is one: in a section that runs in a transaction, it would end or bend that
    /// transaction behind the migrator's back.
    var transactionControl: String? {
        var text = Substring(sql)
        while text.hasPrefix("/*"), let end = text.range(of: "*/") {  // leading block comments
            text = text[end.upperBound...].drop { $0.isWhitespace }
        }
        var words = text.uppercased().split(whereSeparator: { !$0.isLetter }).prefix(2).map(String.init)
        guard let first = words.first else { return nil }
        switch first {
        case "BEGIN", "COMMIT", "END", "ROLLBACK", "ABORT", "SAVEPOINT", "RELEASE":
            return first
        case "START" where words.dropFirst().first == "TRANSACTION", "PREPARE" where words.dropFirst().first == "TRANSACTION":
            words = Array(words.prefix(2))
            return words.joined(separator: " ")
        default:
            return nil
        }
    }
}
