import Foundation

/// What a logical replication stream has said so far — a plain value, used by the feed's thread
/// alone: the tables it described, the transaction being received, and the changes of committed
/// transactions not yet handed on, with the position to confirm once they are.
///
/// Changes are announcements like the triggers' (table, operation, key, version). A row's
/// version is the transaction's id — its `xmin`, unless it was written in a subtransaction,
/// where it differs and the row is read again — when the transaction changed the row once; when
/// it changed the row more than once, 0 (unknown), since a writer may hold a version of the row
/// from between those changes. An inserted or updated row of known version the stream sent
/// whole comes with its change (see ``StreamedRow``). A change whose key the stream does not
/// carry (a NULL or unsent key value) stands for its whole table: a truncate.
struct ReplicationStream {
    private var relations: [UInt32: Described] = [:]
    private var transaction: Transaction?
    private var ready = ChangeBatch()
    /// The ids of the committed transactions whose changes are in `ready`.
    private var readyTransactions: [UInt32] = []
    /// Where the stream resumes after the last commit in `ready`.
    private(set) var readyThrough: UInt64 = 0
    /// The slot's epoch (see ``StreamedRow/epoch``), given to the rows it delivers.
    var epoch: UInt64 = 0

    /// A table as the stream last described it, shared by the changes made to it meanwhile.
    private final class Described: Sendable {
        let relation: PgOutputMessage.Relation
        init(_ relation: PgOutputMessage.Relation) { self.relation = relation }
    }

    private struct Transaction {
        let id: UInt32
        /// Each change, with the row it left (inserts and updates) and its table as it was then.
        var changes: [(change: Change, row: [PgOutputMessage.Cell]?, table: Described?)] = []
        /// How many changes each row had, by table and key — by name, as the stores know rows (a
        /// table dropped and made again under its name in the transaction is the same table).
        var count: [Key: Int] = [:]
        /// The bytes of the rows held so far.
        var rowBytes = 0
    }

    /// The most bytes of rows (values and their cells' cost) one transaction's changes hold
    /// until its commit: the rows of a larger one are read instead (its keys are held all the same).
    static let rowBytesLimit = 64 << 20

    private struct Key: Hashable {
        let table: String
        let key: ChangeKey
    }

    /// Takes in one message of the stream.
    mutating func receive(_ message: PgOutputMessage) throws(PgOutputError) {
        switch message {
        case .begin(_, let id):
            transaction = Transaction(id: id)
        case .commit(_, let end, let committedAt):
            guard let finished = transaction else { throw PgOutputError(description: "a commit outside a transaction") }
            // PostgreSQL's epoch, 2000-01-01 UTC, is 946,684,800 s after Unix's.
            let madeAt = Date(timeIntervalSince1970: 946_684_800 + Double(committedAt) / 1_000_000)
            for (change, cells, table) in finished.changes {
                let once = finished.count[Key(table: change.table, key: change.key)] == 1
                let version = once && change.operation != .truncate ? Int64(finished.id) : 0
                let row = cells.flatMap { cells in table.flatMap { StreamedRow(cells, of: $0.relation, version: version, epoch: epoch) } }
                ready.add(Change(table: change.table, operation: change.operation, key: change.key, version: version, row: row, madeAt: madeAt))
            }
            readyThrough = end
            if !finished.changes.isEmpty { readyTransactions.append(finished.id) }
            transaction = nil
        case .relation(let relation):
            relations[relation.id] = Described(relation)
        case .insert(let id, let new):
            try record(.insert, id, new)
        case .update(let id, let old, let sent):
            // A row kept shares its message's bytes (see ``PgOutputMessage/Cell``): with an old
            // row in the message too, its own are copied, so that what is kept is what is counted.
            let new = old == nil ? sent : sent.map(\.compacted)
            // A changed key: the old row is gone, the new one is there.
            if let old, let relation = relations[id]?.relation, Self.key(old, of: relation) != Self.key(new, of: relation) {
                try record(.delete, id, old)
                try record(.insert, id, new)
            } else {
                try record(.update, id, new)
                // No old row from a table whose replica identity is another index than its key:
                // the key may have changed unseen, and the old one's row would stay. What
                // follows the table is run again, as after a TRUNCATE.
                if old == nil, let relation = relations[id]?.relation, !relation.identityIsKey { try truncate(id) }
            }
        case .delete(let id, let old):
            try record(.delete, id, old)
        case .truncate(let ids):
            for id in ids { try truncate(id) }
        case .message(true, Self.partitionTruncated, let content):
            // A partition truncated alone, which `pgoutput` leaves out when the root is published
            // (see ``LiveSchema/publish(_:on:publication:)``): its table's name, as stores name it.
            guard transaction != nil else { throw PgOutputError(description: "a truncate outside a transaction") }
            let table = String(decoding: content, as: UTF8.self)
            transaction?.changes.append((Change(table: table, operation: .truncate, key: .text(""), version: 0), nil, nil))
            transaction?.count[Key(table: table, key: .text("")), default: 0] += 1
        case .message, .other:
            break
        }
    }

    /// The prefix of the logical message that says a partition of a published table was truncated.
    static let partitionTruncated = "live.truncate"

    /// Whether every change received has been taken: no transaction is open, none waits.
    var isBetweenTransactions: Bool { transaction == nil && ready.changes.isEmpty }

    /// The committed changes not yet handed on, the transactions that made them, and where the
    /// stream stands after them; nil when there are none.
    mutating func take() -> (changes: [Change], transactions: [UInt32], through: UInt64)? {
        guard !ready.changes.isEmpty else { return nil }
        defer { (ready, readyTransactions) = (ChangeBatch(), []) }
        return (ready.changes, readyTransactions, readyThrough)
    }

    private mutating func record(_ operation: Change.Operation, _ id: UInt32, _ row: [PgOutputMessage.Cell]) throws(PgOutputError) {
        guard let table = relations[id] else { throw PgOutputError(description: "a change of a table the stream did not describe") }
        guard let key = Self.key(row, of: table.relation) else { return try truncate(id) }
        try append(Change(table: table.relation.qualifiedName, operation: operation, key: key, version: 0),
                   row: operation == .delete ? nil : row, of: table)
    }

    private mutating func truncate(_ id: UInt32) throws(PgOutputError) {
        guard let table = relations[id] else { throw PgOutputError(description: "a truncate of a table the stream did not describe") }
        try append(Change(table: table.relation.qualifiedName, operation: .truncate, key: .text(""), version: 0), of: table)
    }

    private mutating func append(_ change: Change, row: [PgOutputMessage.Cell]? = nil, of table: Described) throws(PgOutputError) {
        guard transaction != nil else { throw PgOutputError(description: "a change outside a transaction") }
        // Only a row sent whole in binary form is kept (see ``StreamedRow``): its values, and
        // what each cell costs beyond them.
        var bytes = 64
        for cell in row ?? [] {
            switch cell {
            case .binary(let value): bytes += value.count + 48
            case .null: bytes += 16
            case .text, .unchanged: bytes = Self.rowBytesLimit + 1
            }
        }
        let keeps = row != nil && bytes + (transaction?.rowBytes ?? 0) <= Self.rowBytesLimit
        if keeps { transaction?.rowBytes += bytes }
        transaction?.changes.append((change, keeps ? row : nil, table))
        transaction?.count[Key(table: change.table, key: change.key), default: 0] += 1
    }

    /// The row's key as announcements carry it — integers as integers, anything else as its
    /// text, several columns as a composite — or nil when a key column's value is not there.
    static func key(_ row: [PgOutputMessage.Cell], of relation: PgOutputMessage.Relation) -> ChangeKey? {
        guard relation.columns.count == row.count, !relation.keyPositions.isEmpty else { return nil }
        // A key of one column (the usual case) needs no list of parts.
        if relation.keyPositions.count == 1 { return part(row, at: relation.keyPositions[0], isInteger: relation.keyIsInteger[0], of: relation) }
        var parts: [ChangeKey] = []
        for (position, isInteger) in zip(relation.keyPositions, relation.keyIsInteger) {
            guard let part = part(row, at: position, isInteger: isInteger, of: relation) else { return nil }
            parts.append(part)
        }
        return .composite(parts)
    }

    /// The value of key column `position`, or nil when it is not there.
    private static func part(_ row: [PgOutputMessage.Cell], at position: Int, isInteger: Bool, of relation: PgOutputMessage.Relation) -> ChangeKey? {
        switch row[position] {
        case .text(let bytes):
            let text = String(decoding: bytes, as: UTF8.self)
            guard isInteger else { return .text(text) }
            return Int64(text).map(ChangeKey.integer)
        case .binary(let bytes):
            // As PostgreSQL prints it, the way announcements spell keys.
            let column = relation.resultColumns[position]
            let cell = Cell(column: column.name, type: column.type, bytes: bytes)
            return isInteger ? (try? cell.decodeInteger(Int64.self)).map(ChangeKey.integer) : (try? cell.decodeString()).map(ChangeKey.text)
        case .null, .unchanged:
            return nil
        }
    }
}
