import Foundation

/// A `json` value's objects with each repeated key kept once, with its last value — as
/// PostgreSQL's JSON operators and `jsonb` read them (`'{"a":1,"a":2}'::json ->> 'a'` is `2`),
/// where a Swift decoder would take the first. Text without repeated keys is returned as it is.
enum JSONLastKeyWins {
    static func apply(_ bytes: [UInt8]) -> [UInt8] {
        // Cheap test first: no object can repeat a key when the text has fewer than two keys.
        guard bytes.count(where: { $0 == UInt8(ascii: ":") }) > 1 else { return bytes }
        var scanner = Scanner(bytes: bytes)
        let rewritten: [UInt8]?
        do {
            rewritten = try scanner.value()
        } catch {
            return bytes  // not JSON: the decoder says what is wrong with it
        }
        guard scanner.atEndAfterSpace() else { return bytes }
        return rewritten ?? bytes
    }

    private struct Malformed: Error {}

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func atEndAfterSpace() -> Bool {
            skipSpace()
            return index == bytes.count
        }

        /// Scans one value; returns its rewritten text when something inside it changed.
        mutating func value() throws -> [UInt8]? {
            skipSpace()
            guard index < bytes.count else { throw Malformed() }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try object()
            case UInt8(ascii: "["): return try array()
            case UInt8(ascii: "\""): _ = try string(); return nil
            default:
                let start = index
                while index < bytes.count, !",]} \t\n\r".utf8.contains(bytes[index]) { index += 1 }
                guard index > start else { throw Malformed() }
                return nil
            }
        }

        /// The string at `index` (quotes included), moving past it.
        mutating func string() throws -> ArraySlice<UInt8> {
            let start = index
            index += 1
            while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
            }
            guard index < bytes.count else { throw Malformed() }
            index += 1
            return bytes[start..<index]
        }

        mutating func array() throws -> [UInt8]? {
            var parts: [(original: ArraySlice<UInt8>, rewritten: [UInt8]?)] = []
            index += 1
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return nil }
            while true {
                skipSpace()
                let start = index
                let rewritten = try value()
                parts.append((bytes[start..<index], rewritten))
                skipSpace()
                guard index < bytes.count else { throw Malformed() }
                index += 1
                if bytes[index - 1] == UInt8(ascii: "]") { break }
                guard bytes[index - 1] == UInt8(ascii: ",") else { throw Malformed() }
            }
            guard parts.contains(where: { $0.rewritten != nil }) else { return nil }
            return [UInt8(ascii: "[")] + Array(parts.map { $0.rewritten ?? Array($0.original) }.joined(separator: [UInt8(ascii: ",")])) + [UInt8(ascii: "]")]
        }

        mutating func object() throws -> [UInt8]? {
            var members: [(key: String, keyText: ArraySlice<UInt8>, value: ArraySlice<UInt8>, rewritten: [UInt8]?)] = []
            index += 1
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return nil }
            while true {
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Malformed() }
                let keyText = try string()
                let key = keyText.contains(UInt8(ascii: "\\"))
                    ? try JSONDecoder().decode(String.self, from: Data(keyText)) : String(decoding: keyText.dropFirst().dropLast(), as: UTF8.self)
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw Malformed() }
                index += 1
                skipSpace()
                let start = index
                let rewritten = try value()
                members.append((key, keyText, bytes[start..<index], rewritten))
                skipSpace()
                guard index < bytes.count else { throw Malformed() }
                index += 1
                if bytes[index - 1] == UInt8(ascii: "}") { break }
                guard bytes[index - 1] == UInt8(ascii: ",") else { throw Malformed() }
            }
            var last: [String: Int] = [:]
            for (position, member) in members.enumerated() { last[member.key] = position }
            guard last.count < members.count || members.contains(where: { $0.rewritten != nil }) else { return nil }
            let kept = members.enumerated().filter { last[$0.element.key] == $0.offset }.map { _, member in
                Array(member.keyText) + [UInt8(ascii: ":")] + (member.rewritten ?? Array(member.value))
            }
            return [UInt8(ascii: "{")] + Array(kept.joined(separator: [UInt8(ascii: ",")])) + [UInt8(ascii: "}")]
        }
    }
}
