extension Cell {
    /// The value's text: a text column's own, any other type's as PostgreSQL prints it (see
    /// ``TextForm``). A type whose binary form is unknown here is refused, naming the type.
    func decodeString() throws -> String {
        let bytes = try nonNull(String.self)
        if type.isTextual { return try utf8Text(bytes) }
        if let text = try TextForm.string(self) { return text }
        throw error(String.self, .invalidData("its binary form has no text form here; select it as \(column)::text"))
    }

    /// `bytes` as text, exactly: bytes that are not UTF-8 are refused, not replaced — a
    /// replacement character would be written back by the next save of the row. (A database
    /// whose encoding is `SQL_ASCII` stores any bytes in a text column, and converts none.)
    func utf8Text(_ bytes: ArraySlice<UInt8>) throws -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw error(String.self, .invalidData("its bytes are not valid UTF-8 (a database whose encoding is SQL_ASCII holds any bytes); "
                                                  + "select it as \(column)::bytea and decode Data, or convert the text to UTF-8"))
        }
        return text
    }
}
