import Foundation

/// A PostgreSQL `point`: two `double precision` coordinates. Its text is PostgreSQL's
/// (`(1.5,-2)`); as JSON it is that text.
///
/// ```swift
/// let origin = PostgresPoint(x: 0, y: 0)
/// ```
public struct PostgresPoint: Sendable, Hashable, CustomStringConvertible, LosslessStringConvertible {
    /// The first coordinate.
    public var x: Double
    /// The second coordinate.
    public var y: Double

    /// The point (`x`, `y`).
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    /// As PostgreSQL prints it: `(1.5,-2)`.
    public var description: String { "(" + FloatText.postgres(x) + "," + FloatText.postgres(y) + ")" }

    /// Reads `(x,y)` or `x,y`; nil otherwise.
    public init?(_ description: String) {
        var text = Substring(description.trimmingCharacters(in: .whitespaces))
        if text.hasPrefix("("), text.hasSuffix(")") { text = text.dropFirst().dropLast() }
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2, let x = FloatText.double(parts[0]), let y = FloatText.double(parts[1]) else { return nil }
        self.init(x: x, y: y)
    }


}

extension PostgresPoint: PostgresTextCoded {
    /// `point`.
    public static var postgresTypeName: String { "point" }
}

extension PostgresPoint: CellDecodable {
    init(cell: Cell) throws {
        guard cell.type == .point else { throw cell.error(Self.self, .typeMismatch) }
        var reader = BinaryReader(try cell.nonNull(Self.self))
        guard let x = try? reader.read(UInt64.self), let y = try? reader.read(UInt64.self) else {
            throw cell.error(Self.self, .invalidData("truncated point"))
        }
        self.init(x: Double(bitPattern: x), y: Double(bitPattern: y))
    }
}
