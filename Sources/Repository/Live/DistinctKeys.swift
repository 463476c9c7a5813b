/// Rows matched to their ids by Swift's `==` — which counts two strings equal when they differ
/// only in Unicode normalization (`"é"` as one scalar, or `e` and a combining accent), where
/// PostgreSQL keeps two rows apart. Such rows cannot both be held: they would share one live
/// value, and a write meant for one could land on the other. They are refused instead, with an
/// error naming both keys. So are two different rows whose ids are the same bytes: the record's
/// `id` is not its row's key.
@usableFromInline
enum DistinctKeys {
    /// Whether two keys, equal in Swift, are the same bytes (``LiveRepository/keyText(_:)``).
    @usableFromInline static func same(_ text: String, _ other: String) -> Bool {
        text.utf8.elementsEqual(other.utf8)
    }

    /// The error for `text` and `other`: equal in Swift, apart in the database.
    @usableFromInline static func collision(table: String, _ text: String, _ other: String) -> PostgresError {
        func shown(_ key: String) -> String {
            let bytes = key.utf8.map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16) }
            return key.debugDescription + " (UTF-8 " + bytes.joined(separator: " ") + ")"
        }
        return PostgresError(.invalidParameter, "\(table): the keys \(shown(text)) and \(shown(other)) are two rows in the database but one id in Swift, "
                             + "whose String compares them after Unicode normalization; normalize the keys (for example to NFC) or use an id type that compares bytes")
    }

    /// `rows` by id; two rows whose ids are equal in Swift but not the same bytes throw. The
    /// same row twice keeps the first. One dictionary, filled once: this runs on every row read.
    @usableFromInline static func byID<ID: Hashable & Encodable, Content: SyncContent>(_ rows: [(id: ID, committed: Committed<Content>)], table: String) throws -> [ID: Committed<Content>] {
        var found: [ID: Committed<Content>] = [:]
        found.reserveCapacity(rows.count)
        for row in rows where found.updateValue(row.committed, forKey: row.id) != nil {
            // Rare: the same id twice. Which bytes each has is told by the rows themselves.
            guard let first = rows.first(where: { $0.id == row.id }) else { continue }
            let (text, other) = (LiveRepository.keyText(first.id), LiveRepository.keyText(row.id))
            if !same(text, other) { throw collision(table: table, text, other) }
            if Content.differs(first.committed.value, row.committed.value) { throw oneIDForTwoRows(table: table, text) }
            found[row.id] = first.committed
        }
        return found
    }

    /// Adds a record read to `rows`; a record whose id is equal in Swift to one there, but not
    /// the same bytes, throws.
    @inlinable static func add<R: Record>(_ row: Committed<RecordContent<R>>, to rows: inout [R.ID: Committed<RecordContent<R>>], table: String) throws {
        guard let earlier = rows.updateValue(row, forKey: row.value.id) else { return }
        let (text, other) = (LiveRepository.keyText(earlier.value.id), LiveRepository.keyText(row.value.id))
        if !same(text, other) { throw collision(table: table, text, other) }
        if RecordContent<R>.differs(earlier.value, row.value) { throw oneIDForTwoRows(table: table, text) }
    }

    /// Two different rows of one read with the same id, byte for byte: the record's `id` is not
    /// its row's key (a computed `id` over another column, say), so a live value could not tell
    /// them apart. The same row twice (a query that joins) is not this.
    @usableFromInline static func oneIDForTwoRows(table: String, _ text: String) -> PostgresError {
        PostgresError(.invalidParameter, "\(table): two different rows have the same id \(text.debugDescription) in Swift; "
                      + "a Record's id must be its row's primary key (one column, or all of a composite key's), not another column")
    }
}
