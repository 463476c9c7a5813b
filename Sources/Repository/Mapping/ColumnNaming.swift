/// How Swift property names map to column names.
public struct ColumnNaming: Sendable {
    /// The column name for a property name.
    public let columnName: @Sendable (String) -> String

    /// A custom mapping.
    public init(_ columnName: @escaping @Sendable (String) -> String) {
        self.columnName = columnName
    }

    /// `firstName` ↔ `first_name`, `userID` ↔ `user_id`, `htmlURL2` ↔ `html_url2` (the default).
    public static let snakeCase = ColumnNaming(snakeCased)

    /// Columns are named exactly like the properties.
    public static let exact = ColumnNaming { $0 }

    /// Splits a camelCase name into lowercase words joined by `_`, keeping acronyms together.
    static func snakeCased(_ name: String) -> String {
        asciiSnakeCased(name) ?? unicodeSnakeCased(name)
    }

    /// ``snakeCased(_:)`` of an ASCII name, byte by byte (names are read for every decode:
    /// Unicode character properties cost more than the rest of decoding a row); nil otherwise.
    static func asciiSnakeCased(_ name: String) -> String? {
        let bytes = Array(name.utf8)
        guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
        func isUpper(_ byte: UInt8) -> Bool { byte >= 0x41 && byte <= 0x5A }
        func isLower(_ byte: UInt8) -> Bool { byte >= 0x61 && byte <= 0x7A }
        func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count + 4)
        for (index, byte) in bytes.enumerated() {
            if isUpper(byte), index > 0 {
                let previous = bytes[index - 1]
                let nextIsLower = index + 1 < bytes.count && isLower(bytes[index + 1])
                if isLower(previous) || isDigit(previous) || (isUpper(previous) && nextIsLower) { result.append(0x5F) }
            }
            result.append(isUpper(byte) ? byte + 0x20 : byte)
        }
        return String(decoding: result, as: UTF8.self)
    }

    static func unicodeSnakeCased(_ name: String) -> String {
        let characters = Array(name)
        var result = ""
        for (index, character) in characters.enumerated() {
            if character.isUppercase, index > 0 {
                let previous = characters[index - 1]
                let next = index + 1 < characters.count ? characters[index + 1] : nil
                let startsWord = previous.isLowercase || previous.isNumber
                let endsAcronym = previous.isUppercase && (next?.isLowercase ?? false)
                if (startsWord || endsAcronym), previous != "_" { result.append("_") }
            }
            result += character.lowercased()
        }
        return result
    }
}

/// Where each property's column is in a result; conversions cached for the rows of one decode.
final class ColumnLayout {
    let result: QueryResult
    private let naming: ColumnNaming
    private let indexByName: [String: Int]
    private var indexByKey: [String: Int?] = [:]

    init(result: QueryResult, naming: ColumnNaming) {
        self.result = result
        self.naming = naming
        var indexByName: [String: Int] = [:]
        for (index, column) in result.columns.enumerated() where indexByName[column.name] == nil {
            indexByName[column.name] = index
        }
        self.indexByName = indexByName
    }

    func columnName(for key: String) -> String { naming.columnName(key) }

    func columnIndex(for key: String) -> Int? {
        if let cached = indexByKey[key] { return cached }
        let index = indexByName[naming.columnName(key)]
        indexByKey[key] = index
        return index
    }
}
