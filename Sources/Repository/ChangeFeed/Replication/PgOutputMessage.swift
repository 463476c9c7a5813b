/// A message of PostgreSQL's `pgoutput` logical decoding plugin, protocol version 1 — the part
/// a change feed needs: transactions, the tables they touch, and the keys of changed rows.
/// See PostgreSQL's "Logical Replication Message Formats".
enum PgOutputMessage: Equatable, Sendable {
    /// A transaction starts; its changes follow, its commit ends it.
    case begin(finalLSN: UInt64, transaction: UInt32)
    /// The transaction whose changes came since `begin` committed; `endLSN` is where the
    /// stream resumes after it; `committedAt` is when, in microseconds since 2000-01-01 UTC
    /// (PostgreSQL's epoch), by the server's clock.
    case commit(commitLSN: UInt64, endLSN: UInt64, committedAt: Int64)
    /// How a table looks, sent before its first change in a session and after it is altered.
    case relation(Relation)
    case insert(relation: UInt32, new: [Cell])
    /// `old` is the old key (or whole old row) when the key changed or the table's replica
    /// identity is `FULL`.
    case update(relation: UInt32, old: [Cell]?, new: [Cell])
    case delete(relation: UInt32, old: [Cell])
    case truncate(relations: [UInt32])
    /// A message written by `pg_logical_emit_message` (sent when the stream is started with
    /// `messages`); a transactional one comes with its transaction's changes.
    case message(transactional: Bool, prefix: String, content: [UInt8])
    /// Anything else (origins, types): nothing a feed needs.
    case other(UInt8)

    /// A table as the stream describes it, with what each of its rows needs worked out once:
    /// its name, where its key is, and whether that key is an integer.
    struct Relation: Equatable, Sendable {
        let id: UInt32
        let schema: String
        let name: String
        let columns: [Column]
        /// Whether the table has row-level security (the stream sends every row all the same).
        var hasRowSecurity = false
        /// The columns as a read's result names and types them: their types as the stream says
        /// until ``withTypes(_:)`` gives them as the type catalog describes them.
        private(set) var resultColumns: [QueryResult.Column]
        /// `schema.name`, as live stores name their tables.
        let qualifiedName: String
        /// The positions of the key's columns, in the key's order: the columns marked as key,
        /// in table order, until ``withKey(_:)`` gives the primary key's order.
        private(set) var keyPositions: [Int]
        /// Whether each of ``keyPositions`` is an integer column (announcements spell those as numbers).
        private(set) var keyIsInteger: [Bool]
        /// Whether the replica identity's columns are the key's: then an update that changes the
        /// key carries the old one. (An identity on another index sends the old row's identity
        /// only when those columns change; `FULL` always sends the old row.)
        private(set) var identityIsKey: Bool

        init(id: UInt32, schema: String, name: String, columns: [Column]) {
            (self.id, self.schema, self.name, self.columns) = (id, schema, name, columns)
            resultColumns = columns.map { QueryResult.Column(name: $0.name, type: PostgresType(rawValue: $0.type)) }
            qualifiedName = schema + "." + name
            (keyPositions, keyIsInteger, identityIsKey) = ([], [], true)
            keyed(columns.indices.filter { columns[$0].isKey })
        }

        struct Column: Equatable, Sendable {
            /// Whether the column is part of the replica identity (the primary key, by default).
            let isKey: Bool
            let name: String
            let type: UInt32
        }

        /// The same relation whose key is `key`, in that order (its columns keep their places
        /// in rows; ``ReplicationStream`` reads the key in this order).
        func withKey(_ key: [String]) -> Relation {
            var copy = self
            let positions = key.compactMap { name in columns.firstIndex { $0.name == name } }
            // A key the rows do not carry whole (a generated column): no key.
            copy.keyed(positions.count == key.count ? positions : [])
            return copy
        }

        private mutating func keyed(_ positions: [Int]) {
            keyPositions = positions
            keyIsInteger = positions.map { [.int2, .int4, .int8].contains(PostgresType(rawValue: columns[$0].type)) }
            identityIsKey = Set(columns.indices.filter { columns[$0].isKey }) == Set(positions)
        }

        /// The same relation whose columns have these types (described by the type catalog).
        func withTypes(_ types: [PostgresType]) -> Relation {
            guard types.count == columns.count else { return self }
            var copy = self
            copy.resultColumns = zip(columns, types).map { QueryResult.Column(name: $0.name, type: $1) }
            return copy
        }
    }

    /// A column's value in a row of the stream: its bytes are those of the message it came in
    /// (see ``compacted``).
    enum Cell: Equatable, Sendable {
        case null
        /// A TOASTed value the change left as it was: not sent.
        case unchanged
        /// In the type's text form (a type with no binary form, or a stream started without `binary`).
        case text(ArraySlice<UInt8>)
        /// In the type's binary form, as results carry it.
        case binary(ArraySlice<UInt8>)

        /// The same value in bytes of its own: a decoded cell shares the bytes of the whole
        /// message it came in, which a kept cell would keep alive.
        var compacted: Cell {
            switch self {
            case .null, .unchanged: self
            case .text(let bytes): .text(ArraySlice(Array(bytes)))
            case .binary(let bytes): .binary(ArraySlice(Array(bytes)))
            }
        }
    }
}

/// Why bytes could not be read as a `pgoutput` message.
struct PgOutputError: Error, Equatable, CustomStringConvertible {
    let description: String
}

extension PgOutputMessage {
    /// Reads one message (the payload of an `XLogData` copy message).
    static func decode(_ bytes: some Collection<UInt8>) throws(PgOutputError) -> PgOutputMessage {
        var reader = PgOutputReader(Array(bytes))
        let kind = try reader.byte()
        switch kind {
        case UInt8(ascii: "B"):
            let finalLSN = try reader.uint64()
            _ = try reader.uint64()  // commit time
            return .begin(finalLSN: finalLSN, transaction: try reader.uint32())
        case UInt8(ascii: "C"):
            _ = try reader.byte()  // flags
            let commitLSN = try reader.uint64()
            let endLSN = try reader.uint64()
            return .commit(commitLSN: commitLSN, endLSN: endLSN, committedAt: Int64(bitPattern: try reader.uint64()))
        case UInt8(ascii: "R"):
            let id = try reader.uint32()
            let schema = try reader.string(), name = try reader.string()
            _ = try reader.byte()  // replica identity setting
            let count = try reader.uint16()
            var columns: [Relation.Column] = []
            for _ in 0..<count {
                let flags = try reader.byte()
                let column = try reader.string()
                let type = try reader.uint32()
                _ = try reader.uint32()  // type modifier
                columns.append(.init(isKey: flags & 1 == 1, name: column, type: type))
            }
            return .relation(Relation(id: id, schema: schema, name: name, columns: columns))
        case UInt8(ascii: "I"):
            let relation = try reader.uint32()
            try reader.expect("N")
            return .insert(relation: relation, new: try reader.tuple())
        case UInt8(ascii: "U"):
            let relation = try reader.uint32()
            var marker = try reader.byte()
            var old: [Cell]?
            if marker == UInt8(ascii: "K") || marker == UInt8(ascii: "O") {
                old = try reader.tuple()
                marker = try reader.byte()
            }
            guard marker == UInt8(ascii: "N") else { throw PgOutputError(description: "an update without its new row") }
            return .update(relation: relation, old: old, new: try reader.tuple())
        case UInt8(ascii: "D"):
            let relation = try reader.uint32()
            let marker = try reader.byte()
            guard marker == UInt8(ascii: "K") || marker == UInt8(ascii: "O") else { throw PgOutputError(description: "a delete without its key") }
            return .delete(relation: relation, old: try reader.tuple())
        case UInt8(ascii: "T"):
            let count = try reader.uint32()
            _ = try reader.byte()  // options
            var relations: [UInt32] = []
            for _ in 0..<count { relations.append(try reader.uint32()) }
            return .truncate(relations: relations)
        case UInt8(ascii: "M"):
            let flags = try reader.byte()
            _ = try reader.uint64()  // the message's position
            let prefix = try reader.string()
            let length = Int(try reader.uint32())
            return .message(transactional: flags & 1 == 1, prefix: prefix, content: try reader.bytes(length))
        default:
            return .other(kind)
        }
    }
}

/// Reads big-endian integers, NUL-terminated strings and tuples from a message.
private struct PgOutputReader {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func byte() throws(PgOutputError) -> UInt8 {
        guard position < bytes.count else { throw PgOutputError(description: "a message ends early") }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func expect(_ marker: Unicode.Scalar) throws(PgOutputError) {
        guard try byte() == UInt8(ascii: marker) else { throw PgOutputError(description: "expected '\(marker)'") }
    }

    mutating func integer(_ width: Int) throws(PgOutputError) -> UInt64 {
        guard position + width <= bytes.count else { throw PgOutputError(description: "a message ends early") }
        defer { position += width }
        return bytes[position..<position + width].reduce(0) { $0 << 8 | UInt64($1) }
    }

    mutating func uint16() throws(PgOutputError) -> UInt16 { UInt16(try integer(2)) }
    mutating func uint32() throws(PgOutputError) -> UInt32 { UInt32(try integer(4)) }
    mutating func uint64() throws(PgOutputError) -> UInt64 { try integer(8) }

    mutating func bytes(_ count: Int) throws(PgOutputError) -> [UInt8] {
        guard count >= 0, position + count <= bytes.count else { throw PgOutputError(description: "a message ends early") }
        defer { position += count }
        return Array(bytes[position..<position + count])
    }

    mutating func string() throws(PgOutputError) -> String {
        guard let end = bytes[position...].firstIndex(of: 0) else { throw PgOutputError(description: "a string without its end") }
        defer { position = end + 1 }
        return String(decoding: bytes[position..<end], as: UTF8.self)
    }

    mutating func tuple() throws(PgOutputError) -> [PgOutputMessage.Cell] {
        let count = try uint16()
        var cells: [PgOutputMessage.Cell] = []
        for _ in 0..<count {
            switch try byte() {
            case UInt8(ascii: "n"): cells.append(.null)
            case UInt8(ascii: "u"): cells.append(.unchanged)
            case let kind where kind == UInt8(ascii: "t") || kind == UInt8(ascii: "b"):
                let length = Int(try uint32())
                guard position + length <= bytes.count else { throw PgOutputError(description: "a value ends early") }
                let value = bytes[position..<position + length]  // shares the message's bytes
                cells.append(kind == UInt8(ascii: "b") ? .binary(value) : .text(value))
                position += length
            case let other: throw PgOutputError(description: "unknown column kind \(other)")
            }
        }
        return cells
    }
}
