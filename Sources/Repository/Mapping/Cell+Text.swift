extension Cell {
    /// The value's text: a text column's own, any other type's as PostgreSQL prints it (see
    /// ``TextForm``). A type whose binary form is unknown here is refused, naming the type.
    func decodeString() throws -> String {
        let bytes = try nonNull(String.self)
        if type.isTextual { return String(decoding: bytes, as: UTF8.self) }
        if let text = try TextForm.string(self) { return text }
        throw error(String.self, .invalidData("its binary form has no text form here; select it as \(column)::text"))
    }
}
