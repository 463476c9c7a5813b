/// A column value that does not fit the Swift type it is decoded into.
public struct ColumnDecodingError: Error, Sendable, CustomStringConvertible {
    /// Why the value does not fit.
    public enum Reason: Sendable, Hashable {
        /// The result has no such column.
        case missingColumn
        /// The value is NULL and the Swift type is not optional.
        case null
        /// The PostgreSQL type cannot become the Swift type.
        case typeMismatch
        /// The value does not fit the Swift type's range.
        case outOfRange
        /// The bytes are not a valid value of the PostgreSQL type, or the JSON does not decode.
        case invalidData(String)
    }

    /// The column, with an element index for arrays (`tags[2]`).
    public let column: String
    /// The Swift type asked for, such as `Int`.
    public let swiftType: String
    /// The column's PostgreSQL type, when the column exists.
    public let postgresType: PostgresType?
    /// Why the value does not fit.
    public let reason: Reason
    /// The row's key, as the identity map names it, when a live value's re-read row did not decode.
    public internal(set) var row: String?

    /// The record type being read and its table (`Gadget in gadgets`, the table as the type names it), when a live
    /// value's row did not decode.
    public internal(set) var record: String?

    /// Names the row whose column this is (see ``row``).
    @usableFromInline
    mutating func name(row key: String) { row = key }

    /// Names the record type and table being read (see ``record``), unless named already.
    @usableFromInline
    mutating func name<R: Record>(record _: R.Type, table: String) {
        if record == nil { record = "\(R.self) in \(table)" }
    }

    init(column: String, swiftType: Any.Type, postgresType: PostgresType?, reason: Reason) {
        self.column = column
        self.swiftType = swiftType == CellDecoder.SomeArray.self ? "array" : String(describing: swiftType)
        self.postgresType = postgresType
        self.reason = reason
    }

    /// A sentence naming the column, the Swift type and the PostgreSQL type.
    public var description: String {
        let context = [record.map { TerminalText.escaped($0) }, row.map { "row \(TerminalText.quotedForMessage($0))" }].compactMap { $0 }
        return (context.isEmpty ? "" : context.joined(separator: ", ") + ": ") + columnDescription
    }

    private var columnDescription: String {
        let pgType = postgresType.map(\.description) ?? "unknown"
        switch reason {
        case .missingColumn:
            return "column \"\(TerminalText.escaped(column))\" is missing from the result, but Swift type \(swiftType) needs it"
        case .null:
            return "column \"\(TerminalText.escaped(column))\" (PostgreSQL \(pgType)) is NULL, but Swift type \(swiftType) is not optional"
        case .typeMismatch:
            return "column \"\(TerminalText.escaped(column))\": cannot decode PostgreSQL \(pgType) as Swift \(swiftType)"
        case .outOfRange:
            return "column \"\(TerminalText.escaped(column))\": the PostgreSQL \(pgType) value does not fit in Swift \(swiftType)"
        case .invalidData(let detail):
            // The detail may quote the value (a JSON key, an enum's raw value): escaped.
            return "column \"\(TerminalText.escaped(column))\": invalid PostgreSQL \(pgType) value for Swift \(swiftType): \(TerminalText.escaped(detail))"
        }
    }
}
