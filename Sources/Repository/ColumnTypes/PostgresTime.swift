/// A PostgreSQL `time` (without time zone): a time of day to the microsecond, `00:00:00` to
/// `24:00:00`. Its text is PostgreSQL's (`13:45:06.5`); as JSON it is that text.
///
/// ```swift
/// let opening = PostgresTime(hour: 9, minute: 30)
/// ```
public struct PostgresTime: Sendable, Hashable, Comparable, CustomStringConvertible, LosslessStringConvertible {
    /// Microseconds since midnight.
    public var microseconds: Int64

    /// The time `microseconds` after midnight.
    public init(microseconds: Int64) { self.microseconds = microseconds }

    /// `hour:minute:second.microsecond`.
    public init(hour: Int, minute: Int = 0, second: Int = 0, microsecond: Int = 0) {
        microseconds = ((Int64(hour) * 60 + Int64(minute)) * 60 + Int64(second)) * 1_000_000 + Int64(microsecond)
    }

    /// The earlier time of day.
    public static func < (a: PostgresTime, b: PostgresTime) -> Bool { a.microseconds < b.microseconds }

    /// As PostgreSQL prints it: `09:30:00`, `13:45:06.123456`. A time before midnight (negative
    /// microseconds) reads `-00:00:00.000005`, which PostgreSQL refuses rather than taking
    /// another time for it (as it reads `00:00:00.0000-5`: midnight).
    public var description: String {
        microseconds < 0 ? "-" + TimestampFormat.clock(Int64(clamping: microseconds.magnitude), fraction: .trimmed)
            : TimestampFormat.clock(microseconds, fraction: .trimmed)
    }

    /// Reads `HH:MM[:SS[.ffffff]]`; nil otherwise.
    public init?(_ description: String) {
        var scanner = DigitScanner(Array(description.utf8))
        guard let micros = scanner.clock(), scanner.isAtEnd, (0...TimestampFormat.microsecondsPerDay).contains(micros) else { return nil }
        microseconds = micros
    }


}

extension PostgresTime: PostgresTextCoded {
    /// `time`.
    public static var postgresTypeName: String { "time" }
}

extension PostgresTime: CellDecodable {
    init(cell: Cell) throws {
        guard cell.type == .time else { throw cell.error(Self.self, .typeMismatch) }
        var reader = BinaryReader(try cell.nonNull(Self.self))
        guard let micros = try? reader.read(Int64.self) else { throw cell.error(Self.self, .invalidData("truncated time")) }
        self.init(microseconds: micros)
    }
}

/// A PostgreSQL `timetz` (time with time zone): a time of day and a UTC offset, both kept.
/// Its text is PostgreSQL's (`13:45:06.5+05:30`); as JSON it is that text.
///
/// ```swift
/// let standUp = PostgresTimeTZ(time: PostgresTime(hour: 9), utcOffset: 2 * 3600)   // 09:00:00+02
/// ```
public struct PostgresTimeTZ: Sendable, Hashable, CustomStringConvertible, LosslessStringConvertible {
    /// The local time of day.
    public var time: PostgresTime
    /// Seconds east of UTC (`+05:30` is 19,800).
    public var utcOffset: Int32

    /// `time` at `utcOffset` seconds east of UTC.
    public init(time: PostgresTime, utcOffset: Int32) {
        self.time = time
        self.utcOffset = utcOffset
    }

    /// As PostgreSQL prints it: `13:45:06.5+05:30`, `09:00:00+00`, `13:45:06-00:00:15`.
    public var description: String {
        let seconds = Int64(utcOffset.magnitude)
        var zone = (utcOffset >= 0 ? "+" : "-") + TimestampFormat.pad(seconds / 3600, 2)
        if seconds % 3600 != 0 { zone += ":" + TimestampFormat.pad(seconds / 60 % 60, 2) }
        if seconds % 60 != 0 { zone += ":" + TimestampFormat.pad(seconds % 60, 2) }
        return time.description + zone
    }

    /// Reads `HH:MM[:SS[.ffffff]]±HH[:MM[:SS]]`; nil otherwise.
    public init?(_ description: String) {
        var scanner = DigitScanner(Array(description.utf8))
        guard let micros = scanner.clock(), let offset = scanner.zone(), scanner.isAtEnd,
              (0...TimestampFormat.microsecondsPerDay).contains(micros), let zone = Int32(exactly: offset) else { return nil }
        self.init(time: PostgresTime(microseconds: micros), utcOffset: zone)
    }


}

extension PostgresTimeTZ: PostgresTextCoded {
    /// `timetz`.
    public static var postgresTypeName: String { "timetz" }
}

extension PostgresTimeTZ: CellDecodable {
    init(cell: Cell) throws {
        guard cell.type == .timetz else { throw cell.error(Self.self, .typeMismatch) }
        var reader = BinaryReader(try cell.nonNull(Self.self))
        // The zone is stored in seconds west of UTC.
        guard let micros = try? reader.read(Int64.self), let west = try? reader.read(Int32.self) else {
            throw cell.error(Self.self, .invalidData("truncated timetz"))
        }
        self.init(time: PostgresTime(microseconds: micros), utcOffset: -west)
    }
}
