/// A type decoded straight from a cell's binary value (the library's own column types),
/// before the generic `Decodable` path is tried.
protocol CellDecodable {
    init(cell: Cell) throws
}
