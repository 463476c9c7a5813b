/// PostgreSQL's binary `numeric` (base-10000 digits) as decimal text, exactly as the server prints it.
enum NumericFormat {
    static func string(fromBinary bytes: ArraySlice<UInt8>) throws -> String {
        var reader = BinaryReader(bytes)
        let count = Int(try reader.read(Int16.self))
        let weight = Int(try reader.read(Int16.self))
        let sign = try reader.read(UInt16.self)
        let scale = Int(try reader.read(Int16.self))
        let digits = try (0..<count).map { _ in Int(try reader.read(Int16.self)) }
        switch sign {
        case 0xC000: return "NaN"
        case 0xD000: return "Infinity"
        case 0xF000: return "-Infinity"
        default: break
        }
        func group(_ index: Int) -> Int { index >= 0 && index < count ? digits[index] : 0 }
        func padded(_ value: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: 4 - text.count) + text
        }
        var text = sign == 0x4000 ? "-" : ""
        if weight < 0 {
            text += "0"
        } else {
            text += String(group(0))
            for index in stride(from: 1, through: weight, by: 1) { text += padded(group(index)) }
        }
        if scale > 0 {
            var fraction = ""
            var index = weight + 1
            while fraction.count < scale {
                fraction += padded(group(index))
                index += 1
            }
            text += "." + fraction.prefix(scale)
        }
        return text
    }
}
