/// A PostgreSQL `interval`: months, days and microseconds, kept apart as PostgreSQL keeps them.
///
/// A month is not a number of days, nor a day a number of hours (across a daylight-saving
/// change), so `1 mon`, `30 days` and `720:00:00` are three different values here — as they
/// are in the database, though its `=` treats them as equal. Its text is PostgreSQL's
/// (`1 year 2 mons 3 days 04:05:06.7`); as JSON it is that text.
///
/// ```swift
/// let grace = PostgresInterval(days: 3, microseconds: 4 * 3_600_000_000)   // 3 days 04:00:00
/// ```
public struct PostgresInterval: Sendable, Hashable, CustomStringConvertible, LosslessStringConvertible {
    /// Whole months (a year is 12).
    public var months: Int32
    /// Whole days.
    public var days: Int32
    /// Microseconds.
    public var microseconds: Int64

    /// An interval of `months`, `days` and `microseconds`, none converted into another.
    public init(months: Int32 = 0, days: Int32 = 0, microseconds: Int64 = 0) {
        self.months = months
        self.days = days
        self.microseconds = microseconds
    }

    /// As PostgreSQL prints it (`IntervalStyle` `postgres`): `-1 days +02:03:00`, `00:00:00`.
    public var description: String {
        var text = "", isZero = true, isBefore = false
        func part(_ value: Int64, _ unit: String) {
            guard value != 0 else { return }
            text += (isZero ? "" : " ") + (isBefore && value > 0 ? "+" : "") + "\(value) \(unit)" + (value != 1 ? "s" : "")
            isBefore = value < 0
            isZero = false
        }
        part(Int64(months / 12), "year")
        part(Int64(months % 12), "mon")
        part(Int64(days), "day")
        var rest = microseconds
        let hours = rest / 3_600_000_000
        rest -= hours * 3_600_000_000
        let minutes = rest / 60_000_000
        rest -= minutes * 60_000_000
        let seconds = rest / 1_000_000
        let fraction = rest - seconds * 1_000_000
        if isZero || hours != 0 || minutes != 0 || seconds != 0 || fraction != 0 {
            let minus = hours < 0 || minutes < 0 || seconds < 0 || fraction < 0
            text += (isZero ? "" : " ") + (minus ? "-" : isBefore ? "+" : "")
                + TimestampFormat.pad(Int64(hours.magnitude), 2) + ":" + TimestampFormat.pad(Int64(minutes.magnitude), 2) + ":"
                + TimestampFormat.pad(Int64(seconds.magnitude), 2) + TimestampFormat.fractionText(Int64(fraction.magnitude), .trimmed)
        }
        return text
    }

    /// Reads PostgreSQL's own text for an interval, as ``description`` writes it; nil otherwise.
    public init?(_ description: String) {
        var months: Int64 = 0, days: Int64 = 0, micros: Int64 = 0
        let words = description.split(separator: " ")
        var index = 0
        while index < words.count {
            let word = words[index]
            if word.contains(":") {
                let negative = word.hasPrefix("-")
                var scanner = DigitScanner(Array(word.drop { $0 == "-" || $0 == "+" }.utf8))
                guard let clock = scanner.clock(), scanner.isAtEnd else { return nil }
                micros = negative ? 0 &- clock : clock
                index += 1
                continue
            }
            guard index + 1 < words.count, let value = Int64(word.hasPrefix("+") ? String(word.dropFirst()) : String(word)) else { return nil }
            switch words[index + 1] {
            case "year", "years": months += value * 12
            case "mon", "mons": months += value
            case "day", "days": days += value
            case "microsecond", "microseconds": micros += value
            default: return nil
            }
            index += 2
        }
        guard let months = Int32(exactly: months), let days = Int32(exactly: days) else { return nil }
        self.init(months: months, days: days, microseconds: micros)
    }


}

extension PostgresInterval: PostgresTextCoded {
    /// `interval`.
    public static var postgresTypeName: String { "interval" }

    /// `+14 mons -3 days +14706780000 microseconds`: read back as the same three fields under any
    /// `IntervalStyle` (every field signed), to their extremes (PostgreSQL 15 cannot read its own
    /// text of the least interval back).
    public var sqlValue: SQLValue {
        func signed(_ value: some BinaryInteger) -> String { (value < 0 ? "" : "+") + String(value) }
        return .text("\(signed(months)) mons \(signed(days)) days \(signed(microseconds)) microseconds")
    }
}

extension PostgresInterval: CellDecodable {
    init(cell: Cell) throws {
        guard cell.type == .interval else { throw cell.error(Self.self, .typeMismatch) }
        var reader = BinaryReader(try cell.nonNull(Self.self))
        do {
            let micros = try reader.read(Int64.self)
            let days = try reader.read(Int32.self)
            self.init(months: try reader.read(Int32.self), days: days, microseconds: micros)
        } catch {
            throw cell.error(Self.self, .invalidData("truncated interval"))
        }
    }
}
