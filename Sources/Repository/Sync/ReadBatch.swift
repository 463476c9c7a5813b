/// What one batched read of live values found for each id it was asked for, in the order
/// asked: a record's row with its version, decoded only when asked — a store that holds the
/// row at that version needs no decoding (see ``SyncState/confirmRead(version:sequence:)``) —;
/// an aggregate's value, decoded; or nothing (no row: deleted).
@usableFromInline
struct ReadBatch<Content: SyncContent> {
    /// One id's row.
    @usableFromInline enum Found {
        /// Row `index` of the read, at `version`: ``decode(_:)`` makes it a value.
        case row(_ index: Int, version: Content.Version)
        case decoded(Committed<Content>)
    }

    /// One for each id, in the order asked; nil where no row came back.
    @usableFromInline let found: [Found?]
    /// How many rows came back.
    @usableFromInline let rowCount: Int
    /// Decodes row `index` of a ``Found/row(_:version:)``.
    @usableFromInline let decode: (_ index: Int) throws -> Committed<Content>

    init(found: [Found?], rowCount: Int, decode: @escaping (_ index: Int) throws -> Committed<Content>) {
        (self.found, self.rowCount, self.decode) = (found, rowCount, decode)
    }

    /// Values read and decoded, matched to `ids` by Swift's `==` (``DistinctKeys``: two rows
    /// one id in Swift throw).
    init<ID: Hashable & Encodable>(_ ids: [ID], decoded rows: [(id: ID, committed: Committed<Content>)], table: String) throws {
        let byID = try DistinctKeys.byID(rows, table: table)
        found = ids.map { id in byID[id].map(Found.decoded) }
        rowCount = rows.count
        let table = table
        decode = { _ in throw PostgresError(.invalidStatement, "\(table): a read's row was asked to be decoded twice") }  // never: each is decoded
    }
}
