/// The rows a statement returned, copied out of libpq into one buffer.
///
/// Cells keep PostgreSQL's binary format; decode them with ``Row/decode(_:column:)`` or whole
/// rows into `Decodable` structs with ``decode(_:columns:)``.
public struct QueryResult: Sendable, RandomAccessCollection {
    /// A result column: its name and PostgreSQL type.
    public struct Column: Sendable, Hashable {
        /// The column's name as the server reports it.
        public let name: String
        /// The column's PostgreSQL type.
        public let type: PostgresType
    }

    /// The columns, in order.
    public let columns: [Column]
    /// The command tag, such as `INSERT 0 1` or `SELECT 3`.
    public let commandTag: String
    /// The number of rows the command affected (inserted, updated, deleted or selected).
    public let affectedRows: Int

    /// Every cell's bytes, row by row; a cell is a range into it, or nil for NULL.
    let storage: [UInt8]
    let cells: [Range<Int>?]
    /// How many rows: a statement's rows may have no columns (`SELECT FROM t`), so this is not
    /// told by the cells.
    let rowCount: Int

    init(columns: [Column], storage: [UInt8], cells: [Range<Int>?], rowCount: Int, commandTag: String, affectedRows: Int) {
        self.columns = columns
        self.storage = storage
        self.cells = cells
        self.rowCount = rowCount
        self.commandTag = commandTag
        self.affectedRows = affectedRows
    }

    /// The same rows with `columns` (the same names, their types described by the catalog).
    func replacingColumns(_ columns: [Column]) -> QueryResult {
        QueryResult(columns: columns, storage: storage, cells: cells, rowCount: rowCount, commandTag: commandTag, affectedRows: affectedRows)
    }

    /// The first row's index.
    public var startIndex: Int { 0 }
    /// One past the last row's index.
    public var endIndex: Int { rowCount }
    /// The row at `index`.
    public subscript(index: Int) -> Row { Row(result: self, index: index) }

    /// Every row decoded as `type`, properties matched to columns by `columns`.
    public func decode<T: Decodable>(_ type: T.Type, columns naming: ColumnNaming = .snakeCase) throws -> [T] {
        let layout = ColumnLayout(result: self, naming: naming)
        var decoded: [T] = []
        decoded.reserveCapacity(count)
        for index in indices { decoded.append(try T(from: RowDecoder(layout: layout, row: index))) }
        return decoded
    }

    /// The index of the column named `name`, for decoding it as `swiftType` in every row.
    /// - Throws: ``ColumnDecodingError`` when there is no such column.
    func columnIndex(_ name: String, decoding swiftType: Any.Type) throws -> Int {
        guard let column = columns.firstIndex(where: { $0.name == name }) else {
            throw ColumnDecodingError(column: name, swiftType: swiftType, postgresType: nil, reason: .missingColumn)
        }
        return column
    }

    func cell(row: Int, column: Int) -> Cell {
        let info = columns[column]
        let range = cells[row * columns.count + column]
        return Cell(column: info.name, type: info.type, bytes: range.map { storage[$0] })
    }
}

/// One row of a ``QueryResult``.
public struct Row: Sendable {
    let result: QueryResult
    /// The row's position in its result.
    public let index: Int

    /// The row decoded as `type`, properties matched to columns by `columns`.
    public func decode<T: Decodable>(_ type: T.Type, columns naming: ColumnNaming = .snakeCase) throws -> T {
        try T(from: RowDecoder(layout: ColumnLayout(result: result, naming: naming), row: index))
    }

    /// One column's value decoded as `type`.
    /// - Throws: ``ColumnDecodingError`` when there is no such column or its value does not fit.
    public func decode<T: Decodable>(_ type: T.Type, column name: String) throws -> T {
        try decode(type, at: result.columnIndex(name, decoding: T.self))
    }

    /// The value of the column at `column` (0-based) decoded as `type`.
    /// - Throws: ``ColumnDecodingError`` when the result has no such column or its value does not fit.
    public func decode<T: Decodable>(_ type: T.Type, at column: Int) throws -> T {
        guard result.columns.indices.contains(column) else {
            throw ColumnDecodingError(column: "#\(column) (of \(result.columns.count))", swiftType: T.self, postgresType: nil, reason: .missingColumn)
        }
        return try result.cell(row: index, column: column).decode(type)
    }

    /// Whether the named column is NULL in this row (false when there is no such column).
    public func isNull(_ column: String) -> Bool {
        guard let index = result.columns.firstIndex(where: { $0.name == column }) else { return false }
        return result.cell(row: self.index, column: index).bytes == nil
    }
}
