/// A composite value's (a row's) text, as PostgreSQL prints it: `(1,"a b",,"")`.
enum RecordText {
    static func text(_ cell: Cell) throws -> String? {
        guard let bytes = cell.bytes else { return nil }
        var reader = BinaryReader(bytes)
        var fields: [String] = []
        do {
            let count = Int(try reader.read(Int32.self))
            let declared = cell.type.details?.fields ?? []
            for index in 0..<count {
                let oid = try reader.read(UInt32.self)
                let length = Int(try reader.read(Int32.self))
                guard length >= 0 else { fields.append(""); continue }
                let type = index < declared.count && declared[index].rawValue == oid ? declared[index] : PostgresType(rawValue: oid)
                let field = Cell(column: "\(cell.column).\(index + 1)", type: type, bytes: try reader.read(count: length))
                guard let text = try TextForm.string(field) else { return nil }
                fields.append(quoted(text))
            }
        } catch is BinaryReader.Truncated {
            throw cell.error(String.self, .invalidData("truncated record"))
        }
        return "(" + fields.joined(separator: ",") + ")"
    }

    private static func quoted(_ text: String) -> String { quotedDoubling(text, specials: ["\"", "\\", "(", ")", ","]) }
}

/// `text` in double quotes, its quotes and backslashes doubled, when it is empty or holds one of
/// `specials` or white space — how PostgreSQL quotes a record's fields and a range's bounds.
func quotedDoubling(_ text: String, specials: Set<Unicode.Scalar>) -> String {
    // Scalar by scalar: as `Character`s, a quote followed by a combining mark is not a quote.
    guard text.isEmpty || text.unicodeScalars.contains(where: { specials.contains($0) || $0.isPostgresSpace }) else { return text }
    var quoted = String.UnicodeScalarView()
    quoted.append("\"")
    for scalar in text.unicodeScalars {
        if scalar == "\"" || scalar == "\\" { quoted.append(scalar) }
        quoted.append(scalar)
    }
    quoted.append("\"")
    return String(quoted)
}
