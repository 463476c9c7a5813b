/// The `UPDATE` statements of one table's writes, by the columns they set: a write's SQL text is
/// built once per set of columns, not once per write.
final class UpdateStatements: Sendable {
    /// What a write's statement depends on beyond its table: the columns it sets, in order,
    /// which of them are given an empty array of structs (sent as `{}`), and which are written
    /// as a ``JSONBPatch``. Names are compared by
    /// their bytes, as PostgreSQL compares identifiers (`String`'s `==` takes a precomposed `é`
    /// for `e` and a combining accent: two columns to the server).
    struct Shape: Hashable {
        let columns: [String]
        let emptyArrays: [Bool]
        let patched: [Bool]

        init(columns: [String], emptyArrays: [Bool], patched: [Bool]? = nil) {
            (self.columns, self.emptyArrays, self.patched) = (columns, emptyArrays, patched ?? columns.map { _ in false })
        }

        static func == (lhs: Shape, rhs: Shape) -> Bool {
            lhs.emptyArrays == rhs.emptyArrays && lhs.patched == rhs.patched && lhs.columns.elementsEqual(rhs.columns, by: SQLIdentifier.sameBytes)
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(emptyArrays)
            hasher.combine(patched)
            for column in columns {
                hasher.combine(column.utf8.count)
                for byte in column.utf8 { hasher.combine(byte) }
            }
        }
    }

    /// The most statements kept: a table's writes set few combinations of columns, but one
    /// whose writes set every subset of many columns must not grow this without bound.
    static let capacity = 256

    /// A leaf lock: taken for a lookup or an insert only, with nothing taken inside it (`build`
    /// runs outside it), by a store's write loop, which holds no lock then.
    private let built = Locked<[Shape: String]>([:])

    /// The statement for `shape`, built by `build` the first time.
    func sql(for shape: Shape, build: () throws -> String) rethrows -> String {
        if let sql = built.withLock({ $0[shape] }) { return sql }
        let sql = try build()
        built.withLock { if $0.count < Self.capacity { $0[shape] = sql } }
        return sql
    }

    /// How many statements are kept (for tests).
    var count: Int { built.withLock { $0.count } }
}
