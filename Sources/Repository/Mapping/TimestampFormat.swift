import Foundation

/// Conversions between `Date` and PostgreSQL timestamps, exact to the microsecond.
enum TimestampFormat {
    /// Microseconds from 1970-01-01 to 2000-01-01, PostgreSQL's epoch.
    static let postgresEpochMicroseconds: Int64 = 946_684_800_000_000

    /// `2024-02-29 13:45:06.123456+00`, or with ` BC` for years before 1.
    static func string(from date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite else { return seconds < 0 ? "-infinity" : "infinity" }
        let micros = Int64((seconds * 1_000_000).rounded())
        let (days, dayMicros) = floorDivide(micros, 86_400_000_000)
        let (year, month, day) = civilDate(daysSince1970: days)
        let second = dayMicros / 1_000_000
        let fraction = dayMicros % 1_000_000
        let era = year <= 0 ? " BC" : ""
        return pad(year <= 0 ? 1 - year : year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + " "
            + pad(second / 3600, 2) + ":" + pad(second / 60 % 60, 2) + ":" + pad(second % 60, 2)
            + "." + pad(fraction, 6) + "+00" + era
    }

    /// The date for a binary `timestamptz`/`timestamp` (microseconds since 2000-01-01).
    static func date(postgresMicroseconds micros: Int64) -> Date {
        if micros == .max { return .distantFuture }
        if micros == .min { return .distantPast }
        return Date(timeIntervalSince1970: Double(micros + postgresEpochMicroseconds) / 1_000_000)
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
        let quotient = a / b - (a % b < 0 ? 1 : 0)
        return (quotient, a - quotient * b)
    }

    /// Howard Hinnant's `civil_from_days`: proleptic Gregorian date for a day count.
    private static func civilDate(daysSince1970: Int64) -> (Int64, Int64, Int64) {
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

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
