import Foundation

/// The few tokens of SQL that splitting statements and checking expressions need, read from
/// UTF-8 bytes in one pass. White space and closed comments are skipped; literals and quoted
/// names come back as ``Token/other``.
///
/// Bytes are read through a raw pointer and compared with numbers — `'` 0x27, `"` 0x22,
/// `$` 0x24, `;` 0x3B, `(` 0x28, `)` 0x29, `-` 0x2D, `/` 0x2F, `*` 0x2A, `\\` 0x5C, newline
/// 0x0A — because in a debug build (`swift run migrate`) a buffer's subscript and
/// `UInt8(ascii:)` are calls, and this loop runs once per byte of every migration.
struct SQLLexer {
    /// A token's kind; where it is, ``tokenStart`` and ``index`` say. A plain enum, so that
    /// returning one costs nothing in a debug build.
    enum Token {
        /// A `;` (at ``tokenStart``).
        case semicolon
        /// A keyword or unquoted name (``tokenStart`` to ``index``).
        case word
        /// `(`.
        case open
        /// `)`.
        case close
        /// A quote, comment or dollar-quoted body that runs to the end of the text (which one:
        /// ``unclosed``).
        case unclosed
        /// Anything else: a literal, a quoted name, an operator, a number.
        case other
        /// The end of the text.
        case end
    }

    /// What was left open; `description` says it in words.
    enum Unclosed: CustomStringConvertible {
        case quote, doubleQuote, comment, dollarQuote

        var description: String {
            switch self {
            case .quote: "'"
            case .doubleQuote: "\""
            case .comment: "/* comment"
            case .dollarQuote: "dollar-quoted body"
            }
        }
    }

    /// The keywords that open and close SQL-standard function bodies (`BEGIN ATOMIC … END`).
    enum Keyword { case begin, atomic, `case`, end }

    let bytes: UnsafePointer<UInt8>
    let count: Int
    /// Where the last token ends, and the next one is looked for.
    private(set) var index = 0
    /// Where the last token starts.
    private(set) var tokenStart = 0
    /// What the last ``Token/unclosed`` token left open.
    private(set) var unclosed = Unclosed.quote

    init(_ bytes: UnsafePointer<UInt8>, count: Int) {
        self.bytes = bytes
        self.count = count
    }

    /// The next token, ``Token/end`` at the end of the text.
    mutating func next() -> Token {
        while index < count {
            tokenStart = index
            let byte = bytes[index]
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0B, 0x0C, 0x0D:  // white space
                index += 1
            case 0x2D, 0x2F, 0x27, 0x22, 0x24:  // - / ' " $
                // Out of line: an unoptimized build zeroes every local of a function on each
                // call, so this one, called per token, keeps few.
                if let token = skipLiteralOrComment() { return token }
            case 0x3B:
                index += 1
                return .semicolon
            case 0x28:
                index += 1
                return .open
            case 0x29:
                index += 1
                return .close
            default:
                // Range patterns and `Comparable` calls would be calls in a debug build; these are not.
                guard Self.isIdentifierStart(byte) else { index += 1; return .other }
                index += 1
                // isIdentifierPart, written out: this runs once per byte of every name.
                while index < count, (bytes[index] | 0x20) &- 0x61 < 26 || bytes[index] == 0x5F || bytes[index] & 0x80 != 0
                        || bytes[index] &- 0x30 < 10 || bytes[index] == 0x24 {
                    index += 1
                }
                return .word
            }
        }
        return .end
    }

    /// At `-`, `/`, a quote or `$`: skips a comment (nil: no token), or a literal (``Token/other``,
    /// or ``Token/unclosed`` when it runs to the end); a lone `-`, `/` or `$` is ``Token/other``.
    private mutating func skipLiteralOrComment() -> Token? {
        let byte = bytes[index]
        let next = index + 1 < count ? bytes[index + 1] : 0
        switch byte {
        case 0x2D where next == 0x2D:  // --
            index = endOfLine(from: index)
            return nil
        case 0x2F where next == 0x2A:  // /*
            guard let end = endOfBlockComment(from: index) else { return leftOpen(.comment) }
            index = end
            return nil
        case 0x27, 0x22:
            guard let end = endOfQuoted(from: index, backslashEscapes: byte == 0x27 && isEscapeStringPrefix(before: index)) else {
                return leftOpen(byte == 0x27 ? .quote : .doubleQuote)
            }
            index = end
            return .other
        case 0x24:
            guard let tagEnd = dollarTagEnd(from: index) else { index += 1; return .other }
            guard let end = endOfDollarQuoted(tag: index..<tagEnd) else { return leftOpen(.dollarQuote) }
            index = end
            return .other
        default:
            index += 1
            return .other
        }
    }

    private mutating func leftOpen(_ what: Unclosed) -> Token {
        index = count
        unclosed = what
        return .unclosed
    }

    /// The keyword the last word is, in any case, if it is one that matters here.
    func keyword() -> Keyword? {
        let range = tokenStart..<index
        let length = range.upperBound &- range.lowerBound
        guard length >= 3, length <= 6 else { return nil }
        let candidate: (Keyword, StaticString)
        switch bytes[range.lowerBound] & 0xDF {
        case 0x42 /* B */: candidate = (.begin, "BEGIN")
        case 0x41 /* A */: candidate = (.atomic, "ATOMIC")
        case 0x43 /* C */: candidate = (.case, "CASE")
        case 0x45 /* E */: candidate = (.end, "END")
        default: return nil
        }
        guard length == candidate.1.utf8CodeUnitCount else { return nil }
        let letters = candidate.1.utf8Start
        var offset = 1
        while offset < length {
            if bytes[range.lowerBound + offset] & 0xDF != letters[offset] { return nil }
            offset += 1
        }
        return candidate.0
    }

    /// The first offset at or after `start`, before `end`, that is neither white space nor in a
    /// `--` comment.
    func skipSpaceAndLineComments(from start: Int, to end: Int) -> Int {
        var index = start
        while index < end {
            if Self.isSpace(bytes[index]) {
                index += 1
            } else if bytes[index] == 0x2D, index + 1 < end, bytes[index + 1] == 0x2D {
                index = min(endOfLine(from: index), end)
            } else {
                break
            }
        }
        return index
    }

    // Wrapping arithmetic and unsigned comparison of `UInt8`s are transparent: no calls, even
    // unoptimized. (`x &- a < n` is `a <= x < a + n`.)

    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte &- 0x09 < 5
    }

    /// `[A-Za-z_]` or a byte of a non-ASCII character, as PostgreSQL's `ident_start`.
    static func isIdentifierStart(_ byte: UInt8) -> Bool {
        (byte | 0x20) &- 0x61 < 26 || byte == 0x5F || byte & 0x80 != 0
    }

    /// `ident_start`, a digit or `$`, as PostgreSQL's `ident_cont`.
    static func isIdentifierPart(_ byte: UInt8) -> Bool {
        (byte | 0x20) &- 0x61 < 26 || byte == 0x5F || byte & 0x80 != 0 || byte &- 0x30 < 10 || byte == 0x24
    }

    /// The offset of the newline that ends the line holding `start`, or the end of the text: a
    /// `\n` or a `\r`, as PostgreSQL's scanner ends a `--` comment (a file with old Mac line
    /// endings has no `\n` at all).
    private func endOfLine(from start: Int) -> Int {
        let newline = find(0x0A, from: start) ?? count
        guard start < newline, let carriageReturn = memchr(bytes + start, 0x0D, newline - start) else { return newline }
        return UnsafeRawPointer(carriageReturn) - UnsafeRawPointer(bytes)
    }

    /// The offset of the first `byte` at or after `start`, found with `memchr` (one call
    /// instead of a loop of them in a debug build).
    func find(_ byte: UInt8, from start: Int) -> Int? {
        guard start < count, let found = memchr(bytes + start, Int32(byte), count - start) else { return nil }
        return UnsafeRawPointer(found) - UnsafeRawPointer(bytes)
    }

    /// `E'…'` (or `e'…'`): the quote follows an `E` that is a word of its own.
    private func isEscapeStringPrefix(before quote: Int) -> Bool {
        guard quote >= 1, bytes[quote - 1] | 0x20 == 0x65 else { return false }
        return quote == 1 || !Self.isIdentifierPart(bytes[quote - 2])
    }

    /// The offset after the quote that closes the one at `start` (a doubled quote is one
    /// character of the literal), or nil when none does.
    private func endOfQuoted(from start: Int, backslashEscapes: Bool) -> Int? {
        let quote = bytes[start]
        var index = start + 1
        if !backslashEscapes {
            while let found = find(quote, from: index) {
                if found + 1 < count, bytes[found + 1] == quote { index = found + 2; continue }
                return found + 1
            }
            return nil
        }
        while index < count {
            let byte = bytes[index]
            if backslashEscapes, byte == 0x5C { index += 2; continue }
            if byte == quote {
                if index + 1 < count, bytes[index + 1] == quote { index += 2; continue }
                return index + 1
            }
            index += 1
        }
        return nil
    }

    /// The offset after the `*/` that closes the comment at `start`, nested ones included.
    private func endOfBlockComment(from start: Int) -> Int? {
        var depth = 0
        var index = start
        while index + 1 < count {
            if bytes[index] == 0x2F, bytes[index + 1] == 0x2A { depth += 1; index += 2; continue }
            if bytes[index] == 0x2A, bytes[index + 1] == 0x2F {
                depth -= 1
                index += 2
                if depth == 0 { return index }
                continue
            }
            index += 1
        }
        return nil
    }

    /// For `$tag$` or `$$` at `start`, the offset after its closing `$`; nil for a `$` that
    /// opens no dollar quote (`$1`).
    private func dollarTagEnd(from start: Int) -> Int? {
        var index = start + 1
        if index < count, Self.isIdentifierStart(bytes[index]) {
            while index < count, Self.isIdentifierPart(bytes[index]), bytes[index] != 0x24 { index += 1 }
        }
        return index < count && bytes[index] == 0x24 ? index + 1 : nil
    }

    /// The offset after the tag that closes a body opened by `tag`, or nil when none does.
    private func endOfDollarQuoted(tag: Range<Int>) -> Int? {
        var index = tag.upperBound
        while let dollar = find(0x24, from: index), dollar + tag.count <= count {
            if matches(tag, at: dollar) { return dollar + tag.count }
            index = dollar + 1
        }
        return nil
    }

    private func matches(_ tag: Range<Int>, at offset: Int) -> Bool {
        var index = 0
        while index < tag.count {
            if bytes[tag.lowerBound + index] != bytes[offset + index] { return false }
            index += 1
        }
        return true
    }
}
