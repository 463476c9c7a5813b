/// The snake_case column names of the property names seen so far, so that
/// ``ColumnNaming/snakeCase`` converts each name once per process, not once per row decoded or
/// record encoded (a conversion allocates; measured, it was half the cost of decoding a
/// one-row read).
final class SnakeCasedNames: Sendable {
    static let shared = SnakeCasedNames()

    /// The most names kept: property names are a program's own and few, but a `Decodable`
    /// with keys made up at run time must not grow the cache without bound.
    static let capacity = 4096

    /// A leaf lock: taken for a lookup or an insert only, with nothing else taken inside it. It
    /// may be taken while a live store's lock is held (a transition encoding a record).
    private let names = Locked<[String: String]>([:])

    /// How many names are kept.
    var count: Int { names.withLock { $0.count } }

    func name(of property: String) -> String {
        // Only ASCII names are kept: a dictionary finds keys by `String`'s `==`, which takes a
        // precomposed `é` for `e` and a combining accent — two names to PostgreSQL.
        guard property.utf8.allSatisfy({ $0 < 0x80 }) else { return ColumnNaming.snakeCased(property) }
        if let known = names.withLock({ $0[property] }) { return known }
        let converted = ColumnNaming.snakeCased(property)
        names.withLock { names in
            if names.count < Self.capacity { names[property] = converted }
        }
        return converted
    }
}
