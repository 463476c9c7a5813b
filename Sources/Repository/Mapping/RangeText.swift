import Foundation

/// PostgreSQL ranges: their binary form taken apart, and their text written and read.
enum RangeText {
    /// Range flags in the binary form.
    private static let empty: UInt8 = 0x01, lowerInclusive: UInt8 = 0x02, upperInclusive: UInt8 = 0x04
    private static let lowerUnbounded: UInt8 = 0x08, upperUnbounded: UInt8 = 0x10

    typealias Side = (cell: Cell?, inclusive: Bool)

    /// A range cell's endpoints as cells of the subtype (nil cell: unbounded); nil when empty.
    static func parts(of cell: Cell, _ swiftType: Any.Type) throws -> (lower: Side, upper: Side)? {
        let bytes = try cell.nonNull(swiftType)
        guard cell.type.isRange, let subtype = cell.type.element else { throw cell.error(swiftType, .typeMismatch) }
        do {
            return try parts(bytes, subtype: subtype, column: cell.column)
        } catch {
            throw cell.error(swiftType, .invalidData("truncated range"))
        }
    }

    static func parts(_ bytes: ArraySlice<UInt8>, subtype: PostgresType, column: String) throws -> (lower: Side, upper: Side)? {
        var reader = BinaryReader(bytes)
        let flags = try reader.read(UInt8.self)
        if flags & empty != 0 { return nil }
        func side(_ unbounded: UInt8, _ inclusive: UInt8, _ name: String) throws -> Side {
            guard flags & unbounded == 0 else { return (nil, false) }
            let length = Int(try reader.read(Int32.self))
            return (Cell(column: "\(column).\(name)", type: subtype, bytes: try reader.read(count: length)), flags & inclusive != 0)
        }
        return (try side(lowerUnbounded, lowerInclusive, "lower"), try side(upperUnbounded, upperInclusive, "upper"))
    }

    /// A range cell's text, its bounds in their own text form.
    static func text(_ cell: Cell) throws -> String? {
        guard let subtype = cell.type.element, let bytes = cell.bytes else { return nil }
        if cell.type.isMultirange {
            var reader = BinaryReader(bytes)
            let count = Int(try reader.read(Int32.self))
            var ranges: [String] = []
            for _ in 0..<count {
                let length = Int(try reader.read(Int32.self))
                let range = Cell(column: cell.column, type: subtype, bytes: try reader.read(count: length))
                guard let text = try text(range) else { return nil }
                ranges.append(text)
            }
            return "{" + ranges.joined(separator: ",") + "}"
        }
        guard let (lower, upper) = try parts(bytes, subtype: subtype, column: cell.column) else { return "empty" }
        func boundText(_ side: Side) throws -> String? {
            guard let bound = side.cell else { return "" }
            return try TextForm.string(bound).map(Self.bound)
        }
        guard let low = try boundText(lower), let high = try boundText(upper) else { return nil }
        return (lower.inclusive ? "[" : "(") + low + "," + high + (upper.inclusive ? "]" : ")")
    }

    /// A bound's text, quoted when PostgreSQL would quote it.
    static func bound(_ text: String) -> String { quotedDoubling(text, specials: ["\"", "\\", "(", ")", "[", "]", ","]) }

    /// A range's text as its endpoints' texts (nil: unbounded); `.some(nil)` for `empty`; nil if malformed.
    static func parse(_ text: String) -> ((text: String?, inclusive: Bool), (text: String?, inclusive: Bool))?? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.lowercased() == "empty" { return .some(nil) }
        // Scalars, not `Character`s: a quote followed by a combining mark is still a quote.
        var scalars = trimmed.unicodeScalars[...]
        guard let opening = scalars.popFirst(), opening == "[" || opening == "(",
              let closing = scalars.popLast(), closing == "]" || closing == ")" else { return nil }
        var bounds: [String?] = []
        var current = String.UnicodeScalarView(), quoted = false, inQuotes = false, escaped = false
        for scalar in scalars {
            if escaped { current.append(scalar); escaped = false; continue }
            if inQuotes {
                if scalar == "\\" { escaped = true } else if scalar == "\"" { inQuotes = false } else { current.append(scalar) }
                continue
            }
            switch scalar {
            case "\"":
                if quoted { current.append("\"") }  // a doubled quote
                inQuotes = true
                quoted = true
            case "\\": escaped = true
            case ",":
                bounds.append(quoted || !current.isEmpty ? String(current) : nil)
                (current, quoted) = (String.UnicodeScalarView(), false)
            default: current.append(scalar)
            }
        }
        bounds.append(quoted || !current.isEmpty ? String(current) : nil)
        guard bounds.count == 2, !inQuotes else { return nil }
        return .some(((bounds[0], opening == "["), (bounds[1], closing == "]")))
    }

    /// A bound of one of the library's bound types from its text.
    static func value<Bound>(_: Bound.Type, _ text: String) -> Bound? {
        switch Bound.self {
        case is Int32.Type: return Int32(text) as? Bound
        case is Int64.Type: return Int64(text) as? Bound
        case is Decimal.Type: return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) as? Bound
        case is Date.Type: return TimestampFormat.date(parsing: text) as? Bound
        default: return nil
        }
    }
}

extension PostgresType {
    /// Whether this is a range type.
    var isRange: Bool {
        if let details { return details.kind == .range }
        return [3904, 3906, 3908, 3910, 3912, 3926].contains(rawValue)
    }

    /// Whether this is a multirange type.
    var isMultirange: Bool {
        if let details { return details.kind == .multirange }
        return [4451, 4532, 4533, 4534, 4535, 4536].contains(rawValue)
    }
}
