/// A fast reader for the flat JSON objects the change triggers send — string, integer and
/// boolean members, and arrays of strings and integers:
/// `{"table":"public.people","op":"update","version":7301,"keys":[41,42]}`. Anything else
/// returns nil and goes to `JSONDecoder`.
enum FlatJSON {
    enum Value: Equatable {
        case string(String)
        case number(Int64)
        case bool(Bool)
        case array([Value])
    }

    static func members(_ text: String) -> [String: Value]? {
        var reader = Reader(bytes: Array(text.utf8)[...])
        return reader.object()
    }

    private struct Reader {
        var bytes: ArraySlice<UInt8>

        mutating func object() -> [String: Value]? {
            var members: [String: Value] = [:]
            guard expect(0x7B) else { return nil }  // {
            if expect(0x7D) { return end(members) }  // }
            repeat {
                guard let name = string(), expect(0x3A), let value = value(allowingArray: true) else { return nil }  // :
                members[name] = value
            } while expect(0x2C)  // ,
            guard expect(0x7D) else { return nil }
            return end(members)
        }

        private mutating func end(_ members: [String: Value]) -> [String: Value]? {
            skipSpace()
            return bytes.isEmpty ? members : nil
        }

        private mutating func value(allowingArray: Bool) -> Value? {
            skipSpace()
            switch bytes.first {
            case 0x22: return string().map(Value.string)
            case 0x74: return literal("true", .bool(true))
            case 0x66: return literal("false", .bool(false))
            case 0x5B:  // [
                guard allowingArray else { return nil }
                bytes.removeFirst()
                var elements: [Value] = []
                if expect(0x5D) { return .array(elements) }  // ]
                repeat {
                    guard let element = value(allowingArray: false) else { return nil }
                    elements.append(element)
                } while expect(0x2C)
                return expect(0x5D) ? .array(elements) : nil
            default: return number().map(Value.number)
            }
        }

        private mutating func literal(_ word: String, _ value: Value) -> Value? {
            guard bytes.starts(with: word.utf8) else { return nil }
            bytes.removeFirst(word.utf8.count)
            return value
        }

        private mutating func skipSpace() {
            while let byte = bytes.first, byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D { bytes.removeFirst() }
        }

        private mutating func expect(_ byte: UInt8) -> Bool {
            skipSpace()
            guard bytes.first == byte else { return false }
            bytes.removeFirst()
            return true
        }

        private mutating func string() -> String? {
            guard expect(0x22) else { return nil }  // "
            guard let end = bytes.firstIndex(of: 0x22) else { return nil }
            let raw = bytes[bytes.startIndex..<end]
            if raw.contains(0x5C) { return nil }  // an escape: leave it to JSONDecoder
            bytes = bytes[(end + 1)...]
            return String(decoding: raw, as: UTF8.self)
        }

        private mutating func number() -> Int64? {
            skipSpace()
            var end = bytes.startIndex
            if end < bytes.endIndex, bytes[end] == 0x2D { end += 1 }  // -
            while end < bytes.endIndex, bytes[end] >= 0x30, bytes[end] <= 0x39 { end += 1 }
            guard let value = Int64(String(decoding: bytes[bytes.startIndex..<end], as: UTF8.self)) else { return nil }
            bytes = bytes[end...]
            return value
        }
    }
}
