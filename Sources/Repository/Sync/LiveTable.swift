/// The SQL side of one kind of live value: reading values by id and writing a
/// ``SyncState/Write``. ``LiveStore`` runs the same engine over any of them.
@usableFromInline
protocol LiveTable<Content>: Sendable {
    associatedtype Content: SyncContent
    associatedtype ID: Hashable & Sendable & Encodable

    /// The schema-qualified table of the value's own row, as announcements name it.
    var qualifiedName: String { get }
    /// The table as messages name it (``RecordTable/shownName``).
    var shownName: String { get }
    /// Whether values are aggregates (their identity-map entries are apart from the root rows').
    static var holdsAggregates: Bool { get }

    /// The committed values with these ids; missing ones are left out.
    func read(_ ids: [ID]) async throws -> [(id: ID, committed: Committed<Content>)]

    /// The same, through the change feed's connection, on its thread.
    func read(_ ids: [ID], using query: FeedQuery) throws -> [(id: ID, committed: Committed<Content>)]

    /// The same, for the stores of these ids, by position (see ``ReadBatch``).
    func readBatch(_ ids: [ID]) async throws -> ReadBatch<Content>

    /// The same, through the change feed's connection, on its thread.
    func readBatch(_ ids: [ID], using query: FeedQuery) throws -> ReadBatch<Content>

    /// The values in rows the replication stream delivered whole, one for each; nil where the
    /// row must be read (an aggregate's rows always are).
    func committed(streamed rows: [StreamedRow]) -> [Committed<Content>?]

    /// Writes the fields of `write` if the rows are still at its base version.
    func write(_ write: SyncState<Content>.Write, id: ID) async throws -> WriteOutcome<Content>
}

extension LiveTable {
    @usableFromInline func readBatch(_ ids: [ID]) async throws -> ReadBatch<Content> {
        try ReadBatch(ids, decoded: await read(ids), table: shownName)
    }

    @usableFromInline func readBatch(_ ids: [ID], using query: FeedQuery) throws -> ReadBatch<Content> {
        try ReadBatch(ids, decoded: read(ids, using: query), table: shownName)
    }
}

/// Runs one statement on the change feed's connection (valid only during the feed's callback).
@usableFromInline
typealias FeedQuery = (String, [SQLValue]) throws -> QueryResult

/// How a write went.
@usableFromInline
enum WriteOutcome<Content: SyncContent> {
    /// Committed; this is the state it produced.
    case written(Committed<Content>)
    /// Committed; read the value to learn its new versions.
    case committed
    /// Nothing needed writing.
    case unchanged
    /// The rows were no longer at the base version (or are gone): nothing was written.
    case conflict
}
