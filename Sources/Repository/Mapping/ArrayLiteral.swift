/// PostgreSQL's text syntax for one-dimensional arrays: `{"a","b \"quoted\"",NULL}`.
enum ArrayLiteral {
    static func string(from elements: [SQLValue]) -> String {
        var literal = "{"
        for (index, element) in elements.enumerated() {
            if index > 0 { literal += "," }
            switch element {
            case .null: literal += "NULL"
            case .text(let text): appendQuoted(text, to: &literal)
            case .bytes(let bytes): appendQuoted(#"\x"# + hex(bytes), to: &literal)
            }
        }
        return literal + "}"
    }

    private static func appendQuoted(_ text: String, to literal: inout String) {
        literal += "\""
        for character in text {
            if character == "\"" || character == "\\" { literal.append("\\") }
            literal.append(character)
        }
        literal += "\""
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
