/// A PostgreSQL array in its binary form: dimensions, element type, and the elements in
/// row-major order (nil for NULL).
struct BinaryArray {
    let elementType: PostgresType
    let dimensions: [(size: Int, lowerBound: Int)]
    let elements: [ArraySlice<UInt8>?]

    /// Reads an array of `arrayType` (whose described element type, if any, is kept).
    init(_ bytes: ArraySlice<UInt8>, of arrayType: PostgresType) throws(BinaryReader.Truncated) {
        var reader = BinaryReader(bytes)
        let count = Int(try reader.read(Int32.self))
        _ = try reader.read(Int32.self)  // has-nulls flag
        let oid = try reader.read(UInt32.self)
        elementType = arrayType.element?.rawValue == oid ? arrayType.element! : PostgresType(rawValue: oid)
        guard count >= 0, count <= 6 else { throw BinaryReader.Truncated() }
        var dimensions: [(Int, Int)] = []
        for _ in 0..<count { dimensions.append((Int(try reader.read(Int32.self)), Int(try reader.read(Int32.self)))) }
        self.dimensions = dimensions
        let total = dimensions.isEmpty ? 0 : dimensions.reduce(1) { $0 * $1.0 }
        var elements: [ArraySlice<UInt8>?] = []
        elements.reserveCapacity(total)
        for _ in 0..<total {
            let length = Int(try reader.read(Int32.self))
            elements.append(length < 0 ? nil : try reader.read(count: length))
        }
        self.elements = elements
    }

    /// The binary form of the sub-array at `index` of the first dimension (one dimension fewer).
    func subarray(_ index: Int) -> [UInt8] {
        let inner = dimensions.dropFirst()
        let size = inner.reduce(1) { $0 * $1.size }
        var bytes: [UInt8] = []
        func append<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
        }
        append(Int32(inner.count))
        append(Int32(elements.contains { $0 == nil } ? 1 : 0))
        append(elementType.rawValue)
        for dimension in inner {
            append(Int32(dimension.size))
            append(Int32(1))
        }
        for element in elements[(index * size)..<((index + 1) * size)] {
            if let element {
                append(Int32(element.count))
                bytes.append(contentsOf: element)
            } else {
                append(Int32(-1))
            }
        }
        return bytes
    }
}

extension Cell {
    /// The elements of an array, as cells: of the element type for one dimension, of arrays of
    /// one dimension fewer for more (so `[[Int]]` reads a two-dimensional array). An array that
    /// does not start at index 1 is refused: a Swift array cannot say where it starts.
    func arrayElements(_ swiftType: Any.Type) throws -> [Cell] {
        let bytes = try nonNull(swiftType)
        guard type.isArray else { throw error(swiftType, .typeMismatch) }
        let array: BinaryArray
        do {
            array = try BinaryArray(bytes, of: type)
        } catch {
            throw self.error(swiftType, .invalidData("truncated array"))
        }
        guard let first = array.dimensions.first else { return [] }
        if let shifted = array.dimensions.first(where: { $0.lowerBound != 1 }) {
            throw error(swiftType, .invalidData("the array starts at index \(shifted.lowerBound), not 1, which a Swift array cannot say; read it as String"))
        }
        if array.dimensions.count == 1 {
            return array.elements.enumerated().map { index, element in
                Cell(column: "\(column)[\(index + 1)]", type: array.elementType, bytes: element)
            }
        }
        return (0..<first.size).map { index in
            Cell(column: "\(column)[\(index + 1)]", type: type, bytes: array.subarray(index)[...])
        }
    }
}

/// An array's text, as PostgreSQL prints it: `{1,2}`, `{{"a b",NULL},{c,""}}`, `[0:1]={1,2}`.
enum ArrayText {
    static func text(_ cell: Cell) throws -> String? {
        guard let bytes = cell.bytes else { return nil }
        let array: BinaryArray
        do {
            array = try BinaryArray(bytes, of: cell.type)
        } catch {
            throw cell.error(String.self, .invalidData("truncated array"))
        }
        guard !array.dimensions.isEmpty else { return "{}" }
        var texts: [String] = []
        for (index, element) in array.elements.enumerated() {
            guard let element else { texts.append("NULL"); continue }
            let elementCell = Cell(column: "\(cell.column)[\(index + 1)]", type: array.elementType, bytes: element)
            guard let text = try TextForm.string(elementCell) else { return nil }
            texts.append(quoted(text, delimiter: array.elementType.rawValue == 603 ? ";" : ","))
        }
        let delimiter = array.elementType.rawValue == 603 ? ";" : ","
        var position = 0
        func build(_ dimension: Int) -> String {
            let parts = (0..<array.dimensions[dimension].size).map { _ -> String in
                if dimension == array.dimensions.count - 1 {
                    defer { position += 1 }
                    return texts[position]
                }
                return build(dimension + 1)
            }
            return "{" + parts.joined(separator: delimiter) + "}"
        }
        let bounds = array.dimensions.contains { $0.lowerBound != 1 }
            ? array.dimensions.map { "[\($0.lowerBound):\($0.lowerBound + $0.size - 1)]" }.joined() + "=" : ""
        return bounds + build(0)
    }

    private static func quoted(_ text: String, delimiter: Unicode.Scalar) -> String {
        // Scalar by scalar: as `Character`s, a quote followed by a combining mark is not a quote.
        let special: Set<Unicode.Scalar> = ["\"", "\\", "{", "}", delimiter]
        guard text.isEmpty || text.uppercased() == "NULL" || text.unicodeScalars.contains(where: { special.contains($0) || $0.isPostgresSpace })
        else { return text }
        var quoted = String.UnicodeScalarView()
        quoted.append("\"")
        for scalar in text.unicodeScalars {
            if scalar == "\"" || scalar == "\\" { quoted.append("\\") }
            quoted.append(scalar)
        }
        quoted.append("\"")
        return String(quoted)
    }
}

extension Unicode.Scalar {
    /// Whether PostgreSQL's text forms count this as white space (C's `isspace`, ASCII only).
    var isPostgresSpace: Bool { [" ", "\t", "\n", "\r", "\u{0B}", "\u{0C}"].contains(self) }
}
