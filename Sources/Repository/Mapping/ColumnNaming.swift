/// How Swift property names map to column names.
public struct ColumnNaming: Sendable {
    /// The column name for a property name.
    public let columnName: @Sendable (String) -> String

    /// A custom mapping.
    public init(_ columnName: @escaping @Sendable (String) -> String) {
        self.columnName = columnName
    }

    /// `firstName` ↔ `first_name`, `userID` ↔ `user_id`, `htmlURL2` ↔ `html_url2` (the default).
    public static let snakeCase = ColumnNaming { SnakeCasedNames.shared.name(of: $0) }

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
///
/// A record's properties are few and asked for in the same order on every row, so each is
/// found by a scan from where the last one was, with no hashing; a column is found by its name
/// the same way, through a dictionary only for wide results. Nothing is built up front: a
/// one-row result (a read, a write's returned row) pays only for the properties it decodes.
final class ColumnLayout {
    let result: QueryResult
    private let naming: ColumnNaming
    /// The properties asked for so far, in the order first asked, with their columns.
    private var resolved: [(key: String, column: Int?)] = []
    /// Where in ``resolved`` the next property asked for likely is.
    private var cursor = 0
    /// Where the property asked for last is: an optional property is asked for again at once
    /// (`decodeIfPresent` asks whether it is there, whether it is null, then for its value).
    private var last = 0
    /// The columns by name, for results wider than a scan suits (built on first use).
    private lazy var indexByName: [String: Int] = {
        var indexByName: [String: Int] = [:]
        for (index, column) in result.columns.enumerated() where indexByName[column.name] == nil {
            indexByName[column.name] = index
        }
        return indexByName
    }()

    init(result: QueryResult, naming: ColumnNaming) {
        self.result = result
        self.naming = naming
    }

    func columnName(for key: String) -> String { naming.columnName(key) }

    func columnIndex(for key: String) -> Int? {
        if last < resolved.count, resolved[last].key == key { return resolved[last].column }
        if cursor < resolved.count, resolved[cursor].key == key { return found(at: cursor) }
        if let index = resolved.firstIndex(where: { $0.key == key }) { return found(at: index) }
        resolved.append((key, column(named: naming.columnName(key))))
        return found(at: resolved.count - 1)
    }

    private func found(at index: Int) -> Int? {
        last = index
        cursor = index + 1 == resolved.count ? 0 : index + 1
        return resolved[index].column
    }

    /// The first column named `name`.
    private func column(named name: String) -> Int? {
        guard result.columns.count > 16 else { return result.columns.firstIndex { $0.name == name } }
        return indexByName[name]
    }
}
