/// A migration's version: an integer (`42`, `20240229134506`), or dotted numbers (`2.1`) as
/// Flyway's files have them.
///
/// Versions compare part by part as numbers, a missing part counting as zero — Flyway's order:
/// `1.9` < `1.10` < `2`, and `1.0` is the same version as `1`.
public struct MigrationVersion: Sendable, Hashable, Comparable, CustomStringConvertible, ExpressibleByIntegerLiteral {
    /// The numbers, most significant first, without trailing zero parts (`[0]` for zero).
    public let parts: [Int64]

    /// An integer version.
    public init(_ value: Int64) {
        parts = [value]
    }

    /// An integer version written as a literal: `migrator.migrate(database, to: 3)`.
    public init(integerLiteral value: Int64) {
        self.init(value)
    }

    /// Parses `42`, `0042`, `2.1` or Flyway's `2_1`: runs of at most 18 digits separated by
    /// `.` or `_`. Nil for anything else, and for a negative number.
    public init?(_ text: some StringProtocol) {
        var parts: [Int64] = []
        for part in text.split(separator: ".", omittingEmptySubsequences: false).flatMap({ $0.split(separator: "_", omittingEmptySubsequences: false) }) {
            guard !part.isEmpty, part.count <= 18, part.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int64(part) else { return nil }
            parts.append(number)
        }
        guard !parts.isEmpty else { return nil }
        while parts.count > 1, parts.last == 0 { parts.removeLast() }
        self.parts = parts
    }

    /// The version as one integer, when it has a single part.
    public var integer: Int64? { parts.count == 1 ? parts[0] : nil }

    /// `42`, or `2.1` for a dotted version.
    public var description: String { parts.map(String.init).joined(separator: ".") }

    /// Flyway's order: part by part, a missing part counting as zero.
    public static func < (left: MigrationVersion, right: MigrationVersion) -> Bool {
        for index in 0..<max(left.parts.count, right.parts.count) {
            let (a, b) = (left.part(index), right.part(index))
            if a != b { return a < b }
        }
        return false
    }

    private func part(_ index: Int) -> Int64 { index < parts.count ? parts[index] : 0 }
}

extension MigrationVersion: Codable {
    /// A string, always (`"42"`, `"2.1"`, `"20240229134506"`): one type for every version, and
    /// none rounded — a JSON number above 2⁵³ loses digits in most readers.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// Reads a string or a number.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let integer = try? container.decode(Int64.self) {
            self.init(integer)
        } else if let version = MigrationVersion(try container.decode(String.self)) {
            self = version
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a migration version")
        }
    }
}

extension MigrationVersion: SQLValueConvertible {
    /// The version as text; the server reads it as the history column's type (`bigint` or `text`).
    public var sqlValue: SQLValue { .text(description) }
}
