import Foundation

/// Reads the timestamps this library and PostgreSQL write as text: `2024-02-29 13:45:06.5+00`,
/// ISO 8601 (`2024-02-29T13:45:06.123456Z`, `…+05:30`), a bare date, ` BC`, `infinity`.
/// Fractions beyond microseconds are rounded, as PostgreSQL rounds them.
extension TimestampFormat {
    static func date(parsing text: String) -> Date? {
        switch text {
        case "infinity", "+infinity": return .distantFuture
        case "-infinity": return .distantPast
        default: break
        }
        var scanner = DigitScanner(Array(text.utf8))
        guard let micros = scanner.timestamp() else { return nil }
        return date(unixMicroseconds: micros)
    }
}

/// A cursor over ASCII text that reads the numbers of dates, times and zones.
struct DigitScanner {
    let bytes: [UInt8]
    var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { index >= bytes.count }
    var next: UInt8? { isAtEnd ? nil : bytes[index] }

    mutating func skip(_ byte: UInt8) -> Bool {
        guard next == byte else { return false }
        index += 1
        return true
    }

    /// A run of at least one digit, at most 18.
    mutating func number() -> (value: Int64, digits: Int)? {
        var value: Int64 = 0, count = 0
        while let byte = next, byte >= 0x30, byte <= 0x39, count < 18 {
            value = value * 10 + Int64(byte - 0x30)
            count += 1
            index += 1
        }
        return count > 0 ? (value, count) : nil
    }

    /// `.123456789` as microseconds, rounded half away from zero; 0 when there is no fraction.
    mutating func fraction() -> Int64? {
        guard skip(UInt8(ascii: ".")) else { return 0 }
        var micros: Int64 = 0, count = 0, roundUp = false
        while let byte = next, byte >= 0x30, byte <= 0x39 {
            if count < 6 { micros = micros * 10 + Int64(byte - 0x30) } else if count == 6 { roundUp = byte >= 0x35 }
            count += 1
            index += 1
        }
        guard count > 0 else { return nil }
        for _ in count..<max(count, 6) { micros *= 10 }
        return micros + (roundUp ? 1 : 0)
    }

    /// `HH:MM[:SS[.ffffff]]` as microseconds since midnight.
    mutating func clock() -> Int64? {
        guard let hour = number(), skip(UInt8(ascii: ":")), let minute = number() else { return nil }
        var seconds: Int64 = 0, micros: Int64 = 0
        if skip(UInt8(ascii: ":")) {
            guard let second = number(), let fraction = fraction() else { return nil }
            seconds = second.value
            micros = fraction
        }
        // Wrapping: an interval's hours reach Int64's microseconds, whose minimum has no positive.
        return ((hour.value &* 60 &+ minute.value) &* 60 &+ seconds) &* 1_000_000 &+ micros
    }

    /// `Z`, `+00`, `+05:30`, `-03:30:15`, `+0530` as seconds east of UTC; 0 when there is none.
    mutating func zone() -> Int64? {
        if skip(UInt8(ascii: "Z")) { return 0 }
        guard let sign = next, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") else { return 0 }
        index += 1
        guard let first = number() else { return nil }
        var seconds: Int64
        if first.digits == 4 {
            seconds = first.value / 100 * 3600 + first.value % 100 * 60
        } else {
            seconds = first.value * 3600
            if skip(UInt8(ascii: ":")) { guard let minutes = number() else { return nil }; seconds += minutes.value * 60 }
            if skip(UInt8(ascii: ":")) { guard let secs = number() else { return nil }; seconds += secs.value }
        }
        return sign == UInt8(ascii: "-") ? -seconds : seconds
    }

    /// A whole timestamp as microseconds since 1970 (UTC).
    mutating func timestamp() -> Int64? {
        guard let year = number(), skip(UInt8(ascii: "-")), let month = number(), skip(UInt8(ascii: "-")),
              let day = number(), (1...12).contains(month.value), (1...31).contains(day.value) else { return nil }
        var micros: Int64 = 0, offset: Int64 = 0
        if skip(UInt8(ascii: "T")) || skip(UInt8(ascii: " ")) {
            guard let time = clock(), let zone = zone() else { return nil }
            micros = time
            offset = zone
        }
        var bc = false
        if skip(UInt8(ascii: " ")) {
            guard Array(bytes[index...]) == Array("BC".utf8) else { return nil }
            bc = true
            index = bytes.count
        }
        guard isAtEnd else { return nil }
        let civilYear = bc ? 1 - year.value : year.value
        // Past an Int64 of microseconds (about 292,000 years from 1970): no timestamp, not a trap.
        guard abs(civilYear) <= 300_000 else { return nil }
        let days = TimestampFormat.days(year: civilYear, month: month.value, day: day.value)
        let (midnight, overflow) = days.multipliedReportingOverflow(by: TimestampFormat.microsecondsPerDay)
        let (local, later) = midnight.addingReportingOverflow(micros)
        let (utc, shifted) = local.subtractingReportingOverflow(offset * 1_000_000)
        return overflow || later || shifted ? nil : utc
    }
}
