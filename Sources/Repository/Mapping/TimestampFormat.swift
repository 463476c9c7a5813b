import Foundation

/// Conversions between `Date` and PostgreSQL timestamps, exact to the microsecond.
///
/// `Date.distantFuture` and `Date.distantPast` stand for PostgreSQL's `infinity` and
/// `-infinity` both ways, so a row read with an infinite date is written back as one.
enum TimestampFormat {
    /// Microseconds from 1970-01-01 to 2000-01-01, PostgreSQL's epoch.
    static let postgresEpochMicroseconds: Int64 = 946_684_800_000_000
    static let microsecondsPerDay: Int64 = 86_400_000_000

    /// `2024-02-29 13:45:06.123456+00`, with ` BC` for years before 1; `infinity`, `-infinity`;
    /// `NaN` for a `Date` that is not a number, which PostgreSQL refuses naming it (it is no
    /// time; sent as any time, it would be stored as one, or refused as some other value).
    static func string(from date: Date) -> String {
        if date.timeIntervalSinceReferenceDate.isNaN { return "NaN" }
        if date == .distantFuture { return "infinity" }
        if date == .distantPast { return "-infinity" }
        // Past what an Int64 of microseconds holds: a day just past PostgreSQL's range, which it refuses.
        guard let micros = unixMicroseconds(date) else { return date.timeIntervalSince1970 > 0 ? "294277-01-01 00:00:00+00" : "4714-11-23 00:00:00+00 BC" }
        return text(unixMicroseconds: micros, separator: " ", fraction: .fixed, zone: "+00")
    }

    /// JSON's form: ISO 8601 in UTC with microseconds (`2024-02-29T13:45:06.123456Z`) for years
    /// 1 to 9999, PostgreSQL's text otherwise; `infinity`, `-infinity`.
    static func iso8601(from date: Date) -> String {
        guard let micros = unixMicroseconds(date) else { return string(from: date) }
        let (days, _) = floorDivide(micros, microsecondsPerDay)
        let year = civilDate(daysSince1970: days).0
        guard (1...9999).contains(year) else { return string(from: date) }
        return text(unixMicroseconds: micros, separator: "T", fraction: .fixed, zone: "Z")
    }

    /// How a text form writes fractions of a second.
    enum Fraction { case fixed, trimmed }

    /// A timestamp's text: date, `separator`, time, `zone` (nil: none), ` BC` before year 1.
    static func text(unixMicroseconds micros: Int64, separator: String, fraction: Fraction, zone: String?) -> String {
        let (days, dayMicros) = floorDivide(micros, microsecondsPerDay)
        return text(daysSince1970: days, dayMicros: dayMicros, separator: separator, fraction: fraction, zone: zone)
    }

    /// The same for a binary `timestamp`'s microseconds since 2000, in days first: PostgreSQL's
    /// last timestamps are past an Int64 of microseconds since 1970.
    static func text(postgresMicroseconds micros: Int64, separator: String, fraction: Fraction, zone: String?) -> String {
        let (days, dayMicros) = floorDivide(micros, microsecondsPerDay)
        return text(daysSince1970: days + 10_957, dayMicros: dayMicros, separator: separator, fraction: fraction, zone: zone)
    }

    private static func text(daysSince1970 days: Int64, dayMicros: Int64, separator: String, fraction: Fraction, zone: String?) -> String {
        let (year, month, day) = civilDate(daysSince1970: days)
        let era = year <= 0 ? " BC" : ""
        return pad(year <= 0 ? 1 - year : year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + separator
            + clock(dayMicros, fraction: fraction) + (zone ?? "") + era
    }

    /// `13:45:06.123456` for microseconds since midnight (`.trimmed`: as PostgreSQL prints it,
    /// `13:45:06.5`, `13:45:06`).
    static func clock(_ micros: Int64, fraction: Fraction) -> String {
        let second = micros / 1_000_000
        var text = pad(second / 3600, 2) + ":" + pad(second / 60 % 60, 2) + ":" + pad(second % 60, 2)
        text += fractionText(micros % 1_000_000, fraction)
        return text
    }

    /// `.123456`, or trimmed of trailing zeros (nothing for none).
    static func fractionText(_ micros: Int64, _ fraction: Fraction) -> String {
        if fraction == .trimmed {
            guard micros != 0 else { return "" }
            var digits = pad(micros, 6)
            while digits.hasSuffix("0") { digits.removeLast() }
            return "." + digits
        }
        return "." + pad(micros, 6)
    }

    /// `2024-02-29`, with ` BC` before year 1, for days since 1970-01-01.
    static func dayText(daysSince1970 days: Int64) -> String {
        let (year, month, day) = civilDate(daysSince1970: days)
        return pad(year <= 0 ? 1 - year : year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + (year <= 0 ? " BC" : "")
    }

    /// Microseconds from 1970-01-01 to 2001-01-01, `Date`'s own reference.
    static let referenceMicroseconds: Int64 = 978_307_200_000_000

    /// Microseconds since 1970, rounded as PostgreSQL rounds; nil for ±infinity (`distantFuture`,
    /// `distantPast`) and for dates too far for an Int64 of microseconds (beyond ±292,000 years).
    /// Counted from `Date`'s own reference, so that no addition in floating point rounds first.
    static func unixMicroseconds(_ date: Date) -> Int64? {
        if date == .distantFuture || date == .distantPast { return nil }
        // Whole seconds and the fraction apart: seconds times a million in a `Double` would
        // round once past 2^53 microseconds (year 2286), making a whole second 64 µs short.
        let seconds = date.timeIntervalSinceReferenceDate
        guard seconds.isFinite, abs(seconds) < 9.2e12 else { return nil }
        let whole = seconds.rounded(.down)
        let micros = Int64(whole) * 1_000_000 + Int64(((seconds - whole) * 1_000_000).rounded())
        let (unix, overflow) = micros.addingReportingOverflow(referenceMicroseconds)
        return overflow ? nil : unix
    }

    /// The date for a binary `timestamptz`/`timestamp` (microseconds since 2000-01-01); nil when
    /// a `Date` cannot hold it exactly (see ``date(unixMicroseconds:)``).
    static func date(postgresMicroseconds micros: Int64) -> Date? {
        if micros == .max { return .distantFuture }
        if micros == .min { return .distantPast }
        // PostgreSQL's last timestamps (year 294276) are past an Int64 of microseconds since 1970.
        let (unix, overflow) = micros.addingReportingOverflow(postgresEpochMicroseconds)
        return overflow ? nil : date(unixMicroseconds: unix)
    }

    /// The date for a binary `date` (days since 2000-01-01, not ±infinity): whole days, which a
    /// `Date` holds exactly throughout PostgreSQL's range (to year 5874897).
    static func date(postgresDays days: Int64) -> Date {
        Date(timeIntervalSinceReferenceDate: Double(days - 366) * 86_400)  // 2000 had 366 days
    }

    /// The date `micros` after 1970 — or nil when a `Date` cannot hold it exactly: a `Date` is
    /// a `Double` of seconds since 2001, exact to the microsecond within 2^32 seconds of it
    /// (1865 to 2137) and coarser further away (`9999-12-31 23:59:59.999999` would read as year
    /// 10000). Whole seconds are always exact, and so is any `Date` this process made.
    static func date(unixMicroseconds micros: Int64) -> Date? {
        let (sinceReference, overflow) = micros.subtractingReportingOverflow(referenceMicroseconds)
        guard !overflow else { return nil }
        let (seconds, fraction) = floorDivide(sinceReference, 1_000_000)  // each exact as a Double
        let date = Date(timeIntervalSinceReferenceDate: Double(seconds) + Double(fraction) / 1_000_000)
        return unixMicroseconds(date) == micros ? date : nil
    }

    /// Whether a binary `timestamp` is the instant `Date.distantFuture` or `.distantPast` is
    /// (4001-01-01, 0001-01-01 BC's last days): no `Date` holds it apart from ±infinity.
    static func isInfinityInstant(postgresMicroseconds micros: Int64) -> Bool {
        let (unix, overflow) = micros.addingReportingOverflow(postgresEpochMicroseconds)
        return !overflow && [Date.distantFuture, .distantPast].contains { date in
            Int64(date.timeIntervalSinceReferenceDate) * 1_000_000 + referenceMicroseconds == unix
        }
    }

    /// Why a date or timestamp equal to `Date.distantFuture` or `.distantPast` is not read.
    static let infinityInstant = "this is the very Date that stands for infinity or -infinity (Date.distantFuture, .distantPast), and would be written back as that; read it as String"

    /// Why ``date(unixMicroseconds:)`` gave no date: for the error a decode throws.
    static let inexactDate = "a Date cannot hold this timestamp to the microsecond (its precision falls below one more than 136 years from 2001); read it as String to keep every digit"

    static func floorDivide(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
        let quotient = a / b - (a % b < 0 ? 1 : 0)
        return (quotient, a - quotient * b)
    }

    /// Howard Hinnant's `civil_from_days`: proleptic Gregorian date for a day count.
    static func civilDate(daysSince1970: Int64) -> (Int64, Int64, Int64) {
        let z = daysSince1970 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Hinnant's `days_from_civil`: the day count of a proleptic Gregorian date.
    static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
