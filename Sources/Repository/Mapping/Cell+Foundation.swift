import Foundation

/// Foundation's types from their PostgreSQL columns.
extension Cell {
    /// A `timestamp`, `timestamptz` or `date`; `infinity` and `-infinity` are `Date.distantFuture`
    /// and `Date.distantPast` (and written back as such).
    func decodeDate() throws -> Date {
        var reader = BinaryReader(try nonNull(Date.self))
        switch type {
        case .timestamptz, .timestamp:
            let micros = try reader.read(Int64.self)
            guard let date = TimestampFormat.date(postgresMicroseconds: micros) else {
                throw error(Date.self, .invalidData(TimestampFormat.isInfinityInstant(postgresMicroseconds: micros)
                    ? TimestampFormat.infinityInstant : TimestampFormat.inexactDate))
            }
            return date
        case .date:
            let days = try reader.read(Int32.self)
            if days == .max { return .distantFuture }
            if days == .min { return .distantPast }
            let date = TimestampFormat.date(postgresDays: Int64(days))
            // 4001-01-01 and 1 BC's December 30th are the very `Date`s that stand for ±infinity:
            // read as them, they would be written back as infinity.
            if date == .distantFuture || date == .distantPast { throw error(Date.self, .invalidData(TimestampFormat.infinityInstant)) }
            return date
        default: throw error(Date.self, .typeMismatch)
        }
    }

    func decodeUUID() throws -> UUID {
        let bytes = try nonNull(UUID.self)
        guard type == .uuid, bytes.count == 16 else { throw error(UUID.self, .typeMismatch) }
        let b = Array(bytes)
        return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
                           b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }

    func decodeData() throws -> Data {
        let bytes = try nonNull(Data.self)
        guard type == .bytea else { throw error(Data.self, .typeMismatch) }
        return Data(bytes)
    }

    /// A `numeric` exactly (`NaN` is `Decimal.nan`; a value whose significant digits do not fit
    /// a `Decimal`'s 128-bit mantissa — 38 always do, 39 sometimes — is an error, never a rounded
    /// value), an integer, a float, or `money`.
    func decodeDecimal() throws -> Decimal {
        let text: String
        switch type {
        case .numeric: text = try numericText(Decimal.self)
        case .int2, .int4, .int8: text = String(try decodeInteger(Int64.self))
        case .float4, .float8: text = String(try decodeDouble())
        case .money: text = try moneyText()
        default: _ = try nonNull(Decimal.self); throw error(Decimal.self, .typeMismatch)
        }
        if text == "NaN" { return .nan }
        if text.hasSuffix("Infinity") { throw error(Decimal.self, .invalidData("\(text): Decimal has no infinity")) }
        let shown = text.count > 60 ? String(text.prefix(57)) + "..." : text
        let beyond = "\(shown) is beyond what a Decimal holds exactly (38 significant digits, a power of ten from -128 to 127) — read it as String"
        guard let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), !value.isNaN else {
            throw error(Decimal.self, .invalidData(beyond))
        }
        guard let exact = DecimalValue(text), exact == DecimalValue(value.description) else {
            let digits = DecimalValue(text)?.significantDigits ?? 0
            throw error(Decimal.self, .invalidData(digits > 38
                ? "\(shown) has \(digits) significant digits, more than a Decimal holds exactly (38 always fit) — read it as String" : beyond))
        }
        return value
    }

    /// `money` as a plain decimal (`-1234.56`): its binary form counts the smallest units of the
    /// server's `lc_monetary` currency (cents: 2 fraction digits, unless the catalog says otherwise).
    func moneyText() throws -> String {
        var reader = BinaryReader(try nonNull(Decimal.self))
        let units = try reader.read(Int64.self)
        let scale = type.details?.scale ?? 2
        let magnitude = String(units.magnitude)
        let padded = String(repeating: "0", count: max(0, scale + 1 - magnitude.count)) + magnitude
        let whole = padded.dropLast(scale), fraction = padded.suffix(scale)
        return (units < 0 ? "-" : "") + whole + (scale > 0 ? "." + fraction : "")
    }
}
