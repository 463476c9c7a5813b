import Foundation

/// A value's text as PostgreSQL prints it, from its binary form: what a column of any type
/// reads as when the Swift type is `String` — the escape hatch every client has, since the
/// server casts such a string back (`UPDATE … SET t = $1` with the text).
///
/// The text is the server's own under its default settings (`DateStyle` ISO, `IntervalStyle`
/// postgres, `extra_float_digits` 1, `bytea_output` hex), with two differences: a `timestamptz`
/// is written in UTC (`+00`) whatever the session's `TimeZone`, and `money` as a plain decimal
/// (`-1234.56`), not in the locale's currency format. Types whose binary form is unknown here
/// (an extension's, `tsvector`) have none: select them as `column::text`.
enum TextForm {
    static func string(_ cell: Cell) throws -> String? {
        guard let bytes = cell.bytes else { return nil }
        if cell.type.isTextual { return try cell.utf8Text(bytes) }
        var reader = BinaryReader(bytes)
        do {
            switch cell.type.rawValue {
            case 16: return bytes.first != 0 ? "t" : "f"
            case 17: return "\\x" + hex(bytes)
            case 20, 21, 23, 26, 28: return String(try cell.decodeInteger(Int64.self))
            case 29: return String(try reader.read(UInt32.self))
            case 5069: return String(try reader.read(UInt64.self))
            case 700: return FloatText.postgres(Float(bitPattern: try reader.read(UInt32.self)))
            case 701: return FloatText.postgres(Double(bitPattern: try reader.read(UInt64.self)))
            case 1700: return try cell.numericText(String.self)
            case 2950: return try cell.decodeUUID().uuidString.lowercased()
            case 3802: return try cell.utf8Text(bytes.dropFirst())
            case 1082:
                let days = try reader.read(Int32.self)
                if days == .max { return "infinity" }
                if days == .min { return "-infinity" }
                return TimestampFormat.dayText(daysSince1970: Int64(days) + 10_957)
            case 1114, 1184:
                let micros = try reader.read(Int64.self)
                if micros == .max { return "infinity" }
                if micros == .min { return "-infinity" }
                return TimestampFormat.text(postgresMicroseconds: micros, separator: " ",
                                            fraction: .trimmed, zone: cell.type == .timestamptz ? "+00" : nil)
            case 1083: return try PostgresTime(cell: cell).description
            case 1266: return try PostgresTimeTZ(cell: cell).description
            case 1186: return try PostgresInterval(cell: cell).description
            case 650, 869:
                guard let (inet, isCIDR) = PostgresInet.read(bytes) else { return nil }
                return inet.text(alwaysWithPrefix: isCIDR)
            case 774, 829: return bytes.map { hex([$0]) }.joined(separator: ":")
            case 790: return try cell.moneyText()
            case 600, 601, 602, 603, 604, 628, 718: return try GeometryText.text(cell.type.rawValue, &reader)
            case 1560, 1562: return try bits(&reader)
            case 3220:
                let lsn = try reader.read(UInt64.self)
                return String(lsn >> 32, radix: 16, uppercase: true) + "/" + String(lsn & 0xffff_ffff, radix: 16, uppercase: true)
            default: break
            }
        } catch let error as ColumnDecodingError {
            throw error
        } catch {
            throw cell.error(String.self, .invalidData("truncated \(cell.type)"))
        }
        if cell.type.isArray { return try ArrayText.text(cell) }
        if cell.type.isRange || cell.type.isMultirange { return try RangeText.text(cell) }
        if cell.type.rawValue == 2249 || cell.type.details?.kind == .composite { return try RecordText.text(cell) }
        return nil
    }

    static func hex(_ bytes: some Collection<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `bit`/`varbit`: a bit count, then the bits, most significant first.
    private static func bits(_ reader: inout BinaryReader) throws -> String {
        let count = Int(try reader.read(Int32.self))
        let bytes = try reader.read(count: (count + 7) / 8)
        return String((0..<count).map { bytes[bytes.startIndex + $0 / 8] & (0x80 >> UInt8($0 % 8)) != 0 ? "1" : "0" })
    }
}

/// The geometric types' text: `(x,y)` points and what is made of them.
enum GeometryText {
    static func text(_ oid: UInt32, _ reader: inout BinaryReader) throws -> String {
        func number() throws -> String { FloatText.postgres(Double(bitPattern: try reader.read(UInt64.self))) }
        func point() throws -> String { "(" + (try number()) + "," + (try number()) + ")" }
        func points(_ count: Int) throws -> String { try (0..<count).map { _ in try point() }.joined(separator: ",") }
        switch oid {
        case 600: return try point()
        case 601: return "[" + (try points(2)) + "]"
        case 603: return try points(2)
        case 628: return "{" + (try number()) + "," + (try number()) + "," + (try number()) + "}"
        case 718: return "<" + (try point()) + "," + (try number()) + ">"
        case 602:
            let closed = try reader.read(UInt8.self) != 0
            let list = try points(Int(try reader.read(Int32.self)))
            return closed ? "(" + list + ")" : "[" + list + "]"
        default:
            return "(" + (try points(Int(try reader.read(Int32.self)))) + ")"
        }
    }
}
