import Foundation

/// The members of a JSON object's text, each as written: its name (decoded, and as quoted in
/// the text) and its value's text, spaces around it trimmed. Nil for text that is not one
/// well-formed object.
struct JSONObjectMembers {
    struct Member {
        let name: String
        let quotedName: Substring
        let value: Substring
    }

    private(set) var members: [Member] = []

    init?(_ text: String) {
        var scanner = Scanner(text: Substring(text))
        guard scanner.take("{") else { return nil }
        if !scanner.take("}") {
            repeat {
                guard let quoted = scanner.string(), let name = Self.decoded(quoted), scanner.take(":"), let value = scanner.value() else { return nil }
                members.append(Member(name: name, quotedName: quoted, value: value))
            } while scanner.take(",")
            guard scanner.take("}") else { return nil }
        }
        guard scanner.atEnd else { return nil }
    }

    /// The members, each name (by its bytes) once: the last of a name given twice, at its place.
    var lastOfEachName: [Member] {
        var last: [[UInt8]: Int] = [:]
        for (index, member) in members.enumerated() { last[Array(member.name.utf8)] = index }
        return members.enumerated().filter { last[Array($0.element.name.utf8)] == $0.offset }.map(\.element)
    }

    /// A quoted name's text: as it is without escapes; decoded by JSON's rules with them. By
    /// bytes: a name may begin with a combining mark, which `Character`s would join to the quote.
    private static func decoded(_ quoted: Substring) -> String? {
        let inner = quoted.utf8.dropFirst().dropLast()
        guard inner.contains(UInt8(ascii: "\\")) else { return String(decoding: inner, as: UTF8.self) }
        return try? JSONCoding.decoder.decode(String.self, from: Data(quoted.utf8))
    }

    /// Reads JSON text by UTF-8 bytes; values are skipped over, not parsed.
    private struct Scanner {
        let text: Substring
        var index: Substring.UTF8View.Index

        init(text: Substring) {
            self.text = text
            index = text.utf8.startIndex
        }

        var atEnd: Bool {
            mutating get {
                skipSpace()
                return index == text.utf8.endIndex
            }
        }

        private var current: UInt8? { index < text.utf8.endIndex ? text.utf8[index] : nil }

        private mutating func skipSpace() {
            while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { advance() }
        }

        private mutating func advance() { index = text.utf8.index(after: index) }

        /// Takes `character` (after spaces) if it is next.
        mutating func take(_ character: Unicode.Scalar) -> Bool {
            skipSpace()
            guard current == UInt8(character.value) else { return false }
            advance()
            return true
        }

        /// A string, quotes included.
        mutating func string() -> Substring? {
            skipSpace()
            guard current == 0x22 else { return nil }
            let start = index
            advance()
            while let byte = current {
                advance()
                if byte == 0x5C {  // backslash: the next byte is escaped
                    guard current != nil else { return nil }
                    advance()
                } else if byte == 0x22 {
                    return text[start..<index]
                }
            }
            return nil
        }

        /// One value's text: a string, an object or array (brackets matched, strings skipped),
        /// or a literal up to the next `,`, `}` or `]`.
        mutating func value() -> Substring? {
            skipSpace()
            let start = index
            var depth = 0
            while let byte = current {
                switch byte {
                case 0x22:
                    guard string() != nil else { return nil }
                    if depth == 0 { return text[start..<index] }
                    continue
                case 0x7B, 0x5B:
                    depth += 1
                case 0x7D, 0x5D:
                    if depth == 0 { return trimmed(start) }
                    depth -= 1
                    if depth == 0 {
                        advance()
                        return text[start..<index]
                    }
                case 0x2C where depth == 0:
                    return trimmed(start)
                default:
                    break
                }
                advance()
            }
            return depth == 0 ? trimmed(start) : nil
        }

        /// A literal's text from `start`, spaces after it dropped; nil when empty.
        private func trimmed(_ start: Substring.UTF8View.Index) -> Substring? {
            var end = index
            while end > start, case let byte = text.utf8[text.utf8.index(before: end)], byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                end = text.utf8.index(before: end)
            }
            return end == start ? nil : text[start..<end]
        }
    }
}
