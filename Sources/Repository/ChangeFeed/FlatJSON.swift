/// A fast reader for the flat JSON objects the change triggers send
/// (`{"table" : "public.people", "op" : "update", "key" : 42, "version" : 7}`): string and
/// number members only. Anything else returns nil and goes to `JSONDecoder`.
enum FlatJSON {
    enum Value: Equatable {
        case string(String)
        case number(Int64)
    }

    static func members(_ text: String) -> [String: Value]? {
        var bytes = Array(text.utf8)[...]
        var members: [String: Value] = [:]
        func skipSpace() { while let byte = bytes.first, byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D { bytes.removeFirst() } }
        func expect(_ byte: UInt8) -> Bool {
            skipSpace()
            guard bytes.first == byte else { return false }
            bytes.removeFirst()
            return true
        }
        func string() -> String? {
            guard expect(0x22) else { return nil }  // "
            var raw: [UInt8] = []
            while let byte = bytes.popFirst() {
                if byte == 0x22 { return String(decoding: raw, as: UTF8.self) }
                if byte == 0x5C { return nil }  // an escape: leave it to JSONDecoder
                raw.append(byte)
            }
            return nil
        }
        func number() -> Int64? {
            skipSpace()
            var digits: [UInt8] = []
            if bytes.first == 0x2D { digits.append(bytes.removeFirst()) }  // -
            while let byte = bytes.first, byte >= 0x30, byte <= 0x39 { digits.append(bytes.removeFirst()) }
            return Int64(String(decoding: digits, as: UTF8.self))
        }
        guard expect(0x7B) else { return nil }  // {
        repeat {
            guard let name = string(), expect(0x3A) else { return nil }  // :
            skipSpace()
            if bytes.first == 0x22 {
                guard let value = string() else { return nil }
                members[name] = .string(value)
            } else {
                guard let value = number() else { return nil }
                members[name] = .number(value)
            }
        } while expect(0x2C)  // ,
        guard expect(0x7D) else { return nil }  // }
        skipSpace()
        return bytes.isEmpty ? members : nil
    }
}

extension Change {
    /// The change in a trigger's payload, read without `JSONDecoder` when it has the usual shape.
    static func fastParse(_ payload: String) -> Change? {
        guard let members = FlatJSON.members(payload), members.count == 4,
              case .string(let table)? = members["table"], case .string(let op)? = members["op"],
              let operation = Operation(rawValue: op), case .number(let version)? = members["version"]
        else { return nil }
        let key: ChangeKey
        switch members["key"] {
        case .number(let value)?: key = .integer(value)
        case .string(let value)?: key = .text(value)
        case nil: return nil
        }
        return Change(table: table, operation: operation, key: key, version: version)
    }
}
