public import Foundation

/// A row change announced by PostgreSQL: which table, what happened, to which key, at which
/// version. From notifications only a hint — the data itself is read from the table, so a
/// forged notification can at most cause a needless read; from the logical replication
/// stream, which only the server writes, it may carry the row itself.
public struct Change: Sendable, Hashable, Decodable {
    /// What happened to the row.
    public enum Operation: String, Sendable, Hashable, Decodable {
        /// The row was inserted.
        case insert
        /// The row was updated.
        case update
        /// The row was deleted.
        case delete
        /// Every row of the table was removed (`TRUNCATE`); the key is empty.
        case truncate
    }

    /// The schema-qualified table, such as `public.people`.
    public let table: String
    /// What happened.
    public let operation: Operation
    /// The row's key.
    public let key: ChangeKey
    /// The row's version after the change: since migration 0005 the id of the transaction that
    /// made it — the row's `xmin`, unless it was written in a subtransaction — for the
    /// transaction's first announcing statement; 0 (never a row's version: unknown) for its
    /// later ones, for a truncate, and for announcements made before migration 0005. Compare
    /// for equality only.
    public let version: Int64
    /// When the change was made, as the server's clock says: the statement's time in an
    /// announcement (since migration 0004), the transaction's commit through logical
    /// replication; for measuring how long changes take to arrive.
    public private(set) var madeAt: Date?
    /// The row the change left, as the logical replication stream delivered it (nil: it is to
    /// be read). Not part of what the change says: equality and hashing leave it out.
    @usableFromInline var row: StreamedRow?

    /// A change of `key` in `table`.
    public init(table: String, operation: Operation, key: ChangeKey, version: Int64, madeAt: Date? = nil) {
        self.table = table
        self.operation = operation
        self.key = key
        self.version = version
        self.madeAt = madeAt
    }

    /// The same change, to be read.
    var withoutRow: Change {
        var copy = self
        copy.row = nil
        return copy
    }

    /// A change the replication stream delivered with the row it left, committed at `madeAt`.
    init(table: String, operation: Operation, key: ChangeKey, version: Int64, row: StreamedRow?, madeAt: Date? = nil) {
        self.init(table: table, operation: operation, key: key, version: version, madeAt: madeAt)
        self.row = row
    }

    /// Changes are the same when they say the same about the same row (whenever made).
    public static func == (lhs: Change, rhs: Change) -> Bool {
        (lhs.table, lhs.operation, lhs.key, lhs.version) == (rhs.table, rhs.operation, rhs.key, rhs.version)
    }

    /// Hashes what ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(table)
        hasher.combine(operation)
        hasher.combine(key)
        hasher.combine(version)
    }

    enum CodingKeys: String, CodingKey {
        case table, operation = "op", key, version
    }
}

/// A row key as a notification carries it: an integer or a string (UUIDs, text keys), or —
/// for a primary key of several columns — their values in key order.
public enum ChangeKey: Sendable, Hashable, Decodable, CustomStringConvertible {
    /// An integer key.
    case integer(Int64)
    /// A text or UUID key.
    case text(String)
    /// A key of several columns, in the primary key's order.
    case composite([ChangeKey])

    /// Decodes a JSON number or string, or an array of them.
    public init(from decoder: any Decoder) throws {
        if var parts = try? decoder.unkeyedContainer() {
            var values: [ChangeKey] = []
            while !parts.isAtEnd { values.append(try parts.decode(ChangeKey.self)) }
            self = .composite(values)
            return
        }
        let container = try decoder.singleValueContainer()
        if let integer = try? container.decode(Int64.self) {
            self = .integer(integer)
        } else {
            self = .text(try container.decode(String.self))
        }
    }

    /// The key as text: a single value's text; a composite key's values as a JSON array of
    /// their texts (`["7","ada"]`).
    public var description: String {
        switch self {
        case .integer(let value): String(value)
        case .text(let value): value
        case .composite(let parts): KeyText.composite(parts.map(\.description))
        }
    }
}

/// What a ``ChangeFeed`` reports.
public enum ChangeFeedEvent: Sendable, Hashable {
    /// Listening for the first time, at the first attempt.
    case connected
    /// Listening again after an outage — or for the first time after attempts that failed
    /// (reported as ``disconnected(_:)``). Changes committed meanwhile were not announced:
    /// re-read everything you keep.
    case reconnected
    /// Following again after an outage, from where the feed stopped (logical replication
    /// resumes its slot): the changes committed meanwhile follow as ``changes(_:)``; nothing
    /// needs re-reading.
    case resumed
    /// The listening connection was lost or could not be opened; the feed keeps retrying. The
    /// first failure of an outage, and a retry's that differs from those reported once retries
    /// have failed that way for 30 s (a login refused since, say).
    case disconnected(PostgresError)
    /// Changes drained in one go, one per (table, key): the last announced operation, with the
    /// last version announced.
    case changes([Change])
    /// A notification on the channel that is not a valid change announcement (malformed,
    /// forged, or from an unknown sender). Nothing was done with it.
    case ignored(payload: String, reason: String)
}

extension ChangeKey {
    /// The key as a record's id type, or nil if it cannot be one (a forged announcement).
    /// Inlinable: this runs once per announced row, and compiled for the id type (as a live
    /// query's router is, see ``RoutePass``) the usual keys cost no dynamic cast.
    @inlinable func decode<ID: Decodable>(as _: ID.Type) -> ID? {
        switch self {
        case .integer(let value):
            if let id = value as? ID ?? Int(exactly: value) as? ID { return id }
        case .text(let value):
            if let id = value as? ID ?? UUID(uuidString: value) as? ID { return id }
        case .composite:
            return nil  // a struct of key columns: see ``TableKey/id(from:as:)``
        }
        return decodeAsJSON(as: ID.self)
    }

    /// The key as a JSON number or string, decoded as `ID` (a wrapper type, say).
    @usableFromInline func decodeAsJSON<ID: Decodable>(as _: ID.Type) -> ID? {
        let json: String
        switch self {
        case .integer(let value): json = String(value)
        case .text(let value):
            guard let quoted = try? JSONEncoder().encode(value) else { return nil }
            json = String(decoding: quoted, as: UTF8.self)
        case .composite: return nil
        }
        return try? JSONDecoder().decode(ID.self, from: Data(json.utf8))
    }
}
