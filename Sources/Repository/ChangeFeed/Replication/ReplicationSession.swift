internal import CPostgres
import Foundation

/// A feed session on a logical replication stream: a slot decoding with `pgoutput` the tables
/// of a publication, and a second, ordinary connection for re-reads and lookups.
///
/// The slot (see ``ReplicationSlot``) outlives the session: after an outage, the next session
/// takes up the stream where this one stopped, so the changes committed meanwhile arrive as
/// changes, and nothing is re-read. When the slot is gone (dropped as abandoned, or the server
/// invalidated it), the next session starts a new one from the present and is not `resumed`.
final class ReplicationSession: FeedSession {
    private var stream: FeedConnection?
    private let queries: FeedConnection
    private let slot: ReplicationSlot
    private let statementDeadline: Duration
    private let types: TypeCatalog
    private var state = ReplicationStream()
    private var lastCleanUp = ContinuousClock.now
    let resumed: Bool

    /// Opens both connections, makes the publication if there is none, and starts streaming —
    /// from `slot` where it stopped, if it still exists (blocking); statements end early once
    /// `stop` is readable (see ``FeedConnection``).
    init(_ configuration: ConnectionConfiguration, publication: String, slot: ReplicationSlot, statementDeadline: Duration,
         types: TypeCatalog, stop: Int32) throws {
        self.statementDeadline = statementDeadline
        self.slot = slot
        self.types = types
        queries = try FeedConnection(configuration, channel: nil, deadline: statementDeadline, types: types, stop: stop)
        // Rows in binary form from PostgreSQL 14 on; before, rows come as text, and are read.
        // So do logical messages: a partition truncated alone is one (see ``ReplicationStream``).
        let binary = try Self.checkServer(queries, deadline: statementDeadline) >= 140_000 ? ", binary 'true', messages 'true'" : ""
        try Self.ensure(publication, on: queries, deadline: statementDeadline)
        try slot.dropAbandoned(on: queries, deadline: statementDeadline)
        slot.dropUnusable(on: queries, deadline: statementDeadline)
        let stream = try FeedConnection(configuration.overriding("replication", "database"), channel: nil, deadline: statementDeadline, types: types,
                                        stop: stop)
        let names = SQLIdentifier.quoted(publication).replacingOccurrences(of: "'", with: "''")
        func start(_ name: String, at position: UInt64) throws {
            let lsn = String(position >> 32, radix: 16, uppercase: true) + "/" + String(position & 0xFFFF_FFFF, radix: 16, uppercase: true)
            try stream.startStreaming("START_REPLICATION SLOT \(name) LOGICAL \(lsn) (proto_version '1', publication_names '\(names)'\(binary))",
                                      deadline: statementDeadline)
        }
        var resumed = false
        if let name = slot.name, !slot.mustStartAnew {
            do {
                try start(name, at: slot.confirmed)
                resumed = true
            } catch let error as PostgresError where error.sqlState == "42704" || error.sqlState == "55000" {
                // Gone (dropped as abandoned), or invalidated: a new slot, from the present.
            }
        }
        if !resumed {
            let name = ReplicationSlot.freshName()
            let create = "CREATE_REPLICATION_SLOT \(name) LOGICAL pgoutput NOEXPORT_SNAPSHOT"
            // A new slot waits for every transaction running on the server to end.
            let creating = max(statementDeadline, Self.slotCreationDeadline)
            do {
                try stream.execute(create, deadline: creating)
            } catch let error as PostgresError where error.sqlState == "53400" {
                // No slot left: those of processes that died without dropping theirs go first.
                try slot.dropAbandoned(on: queries, deadline: statementDeadline, all: true)
                try stream.execute(create, deadline: creating)
            }
            try start(name, at: 0)
            slot.adopt(name)
        }
        self.stream = stream
        self.resumed = resumed
        state.epoch = slot.epoch
    }

    /// How long making a slot may wait for the transactions running on the server to end.
    static let slotCreationDeadline: Duration = .seconds(60)

    var socket: Int32 { stream?.socket ?? -1 }
    var errorMessage: String { stream?.errorMessage ?? "" }
    private(set) var wasRefused = false

    func finish() {
        stream = nil  // the connection closes: the slot is free to drop
    }

    func receive(_ output: FeedOutput) -> Bool {
        guard let stream, PQconsumeInput(stream.pg) != 0 else { return false }
        var buffer: UnsafeMutablePointer<CChar>?
        while true {
            let length = PQgetCopyData(stream.pg, &buffer, 1)
            if length == 0 { break }  // the rest has not arrived yet
            guard length > 0, let bytes = buffer else {  // -1: the stream ended; -2: an error
                noteEnd(of: stream)
                return false
            }
            defer { PQfreemem(bytes) }
            let message = UnsafeRawBufferPointer(start: bytes, count: Int(length))
            do {
                if try !take(message) { return false }
            } catch {
                wasRefused = true  // a message this session cannot read: the next one would read it too
                return false
            }
        }
        return handOn(output)
    }

    /// The stream ended: when the server says why with `undefined_object` — a publication
    /// dropped while changes after it were still to be decoded, or the slot gone — resuming
    /// would fail the same way every time, so the next session starts a new slot (and, not
    /// resumed, has every live value read again).
    private func noteEnd(of stream: FeedConnection) {
        while PQisBusy(stream.pg) == 0, let result = PQgetResult(stream.pg) {
            defer { PQclear(result) }
            guard PQresultStatus(result) == PGRES_FATAL_ERROR, let field = PQresultErrorField(result, Int32(Character("C").asciiValue!)) else { continue }
            let code = String(cString: field)
            if code == "42704" { slot.cannotResume() }
            // Class 57 (operator intervention: a terminated backend, a shutdown) and class 08
            // (connection exception) end a connection; anything else — and a protocol violation
            // (08P01), which the next session would commit again — is the server refusing the stream.
            if (!code.hasPrefix("57") && !code.hasPrefix("08")) || code == "08P01" { wasRefused = true }
        }
    }

    func idle(_ output: FeedOutput) -> Bool {
        // Now and then, drop the slots of processes that are gone.
        if ContinuousClock.now - lastCleanUp > .seconds(30) {
            lastCleanUp = .now
            do { try slot.dropAbandoned(on: queries, deadline: statementDeadline) } catch { return false }
        }
        return sendStatus()
    }

    /// One copy message: WAL data (a `pgoutput` message) or the server's keepalive.
    private func take(_ message: UnsafeRawBufferPointer) throws -> Bool {
        guard let kind = message.first else { return true }
        switch kind {
        case UInt8(ascii: "w") where message.count >= 25:
            var decoded = try PgOutputMessage.decode(message[25...])
            if case .relation(let relation) = decoded {
                decoded = .relation(try described(inKeyOrder(relation)))
            }
            try state.receive(decoded)
            return true
        case UInt8(ascii: "k") where message.count >= 18:
            // Everything sent so far has been taken: WAL up to here (other tables' changes, say)
            // is not needed again.
            if state.isBetweenTransactions { slot.confirmed = max(slot.confirmed, (1...8).reduce(0) { $0 << 8 | UInt64(message[$1]) }) }
            // Asked to answer at once (the server is about to time this connection out).
            return message[17] == 1 ? sendStatus() : true
        default:
            return true
        }
    }

    /// Hands the committed changes on — their rows at once, reads once their transactions are
    /// visible (see ``ChangeVisibility``) — then confirms the position after them.
    private func handOn(_ output: FeedOutput) -> Bool {
        guard let (changes, transactions, through) = state.take() else { return true }
        let visibility = ChangeVisibility { [self] in try waitUntilVisible(transactions) }
        output.changes(changes, { [queries, statementDeadline] sql, values in
            try queries.query(sql, values, deadline: statementDeadline)
        }, visibility)
        // Not confirmed unless visible: after a failure, the next session streams them again.
        guard visibility.ensure() else { return false }
        slot.confirmed = max(slot.confirmed, through)
        return sendStatus()
    }

    /// Waits until new snapshots see `transactions` committed. The stream sends a commit once
    /// its WAL is flushed, which comes a moment before the transaction stops counting as in
    /// progress: a row read at once could still be the old one, and its change lost.
    private func waitUntilVisible(_ transactions: [UInt32]) throws {
        let statement = """
            SELECT bool_and(pg_visible_in_snapshot((CASE WHEN x <= xmax % 4294967296 THEN floor(xmax / 4294967296)
                ELSE floor(xmax / 4294967296) - 1 END * 4294967296 + x)::text::xid8, snapshot))
            FROM (SELECT pg_current_snapshot() AS snapshot, pg_snapshot_xmax(pg_current_snapshot())::text::numeric AS xmax) s,
                 unnest($1::bigint[]) AS x
            """
        let ids = SQLValue.text("{" + transactions.map(String.init).joined(separator: ",") + "}")
        let end = ContinuousClock.now + statementDeadline
        while try !queries.query(statement, [ids], deadline: statementDeadline)[0].decode(Bool.self, at: 0) {
            guard ContinuousClock.now < end else { throw PostgresError(.connectionLost, "committed transactions did not become visible") }
            Thread.sleep(forTimeInterval: 0.0002)
        }
    }

    /// Tells the server how far this session has handled the stream: it may recycle WAL before
    /// that point. Only what was handed on is confirmed.
    private func sendStatus() -> Bool {
        guard let stream else { return false }
        var message: [UInt8] = [UInt8(ascii: "r")]
        let now = UInt64(max(0, (Date().timeIntervalSince1970 - 946_684_800) * 1_000_000))
        let confirmed = slot.confirmed
        for value in [confirmed, confirmed, confirmed, now] {
            message += (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
        }
        message.append(0)
        let sent = message.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { PQputCopyData(stream.pg, $0.baseAddress, Int32($0.count)) }
        }
        guard sent == 1 else { return false }
        // All of it: what stays queued would go only with the next message.
        let end = ContinuousClock.now + statementDeadline
        while true {
            switch PQflush(stream.pg) {
            case 0: return true
            case 1:
                var descriptor = pollfd(fd: PQsocket(stream.pg), events: Int16(POLLOUT), revents: 0)
                guard ContinuousClock.now < end, poll(&descriptor, 1, 100) >= 0 else { return false }
            default: return false
            }
        }
    }

    /// The relation with its key columns marked in the primary key's order, which the stream
    /// does not give: announcements list a composite key's values in that order.
    /// (Every table's: the stream marks its replica identity's columns, which may be another
    /// index's, or miss a generated column of the key. Without the whole key in its rows, a
    /// table's changes stand for the whole table.)
    /// Also whether the table has row-level security, which the stream does not apply: its rows
    /// are read (the stream describes a table again after it is altered, so this follows
    /// `ALTER TABLE … ENABLE ROW LEVEL SECURITY` made while it runs).
    private func inKeyOrder(_ relation: PgOutputMessage.Relation) throws -> PgOutputMessage.Relation {
        let order = try queries.query("""
            SELECT a.attname FROM pg_index i, unnest(i.indkey) WITH ORDINALITY AS k(attnum, n), pg_attribute a
            WHERE i.indrelid = $1 AND i.indisprimary AND a.attrelid = i.indrelid AND a.attnum = k.attnum ORDER BY k.n
            """, [.text(String(relation.id))], deadline: statementDeadline).map { try $0.decode(String.self, at: 0) }
        let secured = try queries.query("SELECT relrowsecurity FROM pg_class WHERE oid = $1", [.text(String(relation.id))],
                                        deadline: statementDeadline).first.map { try $0.decode(Bool.self, at: 0) } ?? true
        var keyed = relation.withKey(order)
        keyed.hasRowSecurity = secured
        return keyed
    }

    /// The relation with its columns' types as reads describe them (see ``TypeCatalog``), so
    /// that its rows decode as read rows do: a domain as its base type, as results give it.
    private func described(_ relation: PgOutputMessage.Relation) -> PgOutputMessage.Relation {
        let columns = QueryResult(columns: relation.resultColumns, storage: [], cells: [], rowCount: 0, commandTag: "", affectedRows: 0)
        let described = types.describing(columns) { [queries, statementDeadline] sql, values in
            try queries.query(sql, values, deadline: statementDeadline)
        }
        return relation.withTypes(described.columns.map { column in
            var type = column.type
            while type.details?.kind == .domain, let base = type.details?.element { type = base }
            return type
        })
    }

    /// What the server must allow, said in one line each: `wal_level = logical`, and a role
    /// with the `REPLICATION` attribute. The server's version number (`server_version_num`).
    private static func checkServer(_ connection: FeedConnection, deadline: Duration) throws -> Int {
        let row = try connection.query("""
            SELECT current_setting('wal_level'), current_user, rolreplication OR rolsuper, current_setting('server_version_num')::int8
            FROM pg_roles WHERE rolname = current_user
            """, [], deadline: deadline)[0]
        let (level, role) = (try row.decode(String.self, at: 0), try row.decode(String.self, at: 1))
        guard level == "logical" else {
            throw PostgresError(.invalidConfiguration, "logical replication needs wal_level = logical, and the server has \(level): set it in postgresql.conf and restart the server")
        }
        // A feed matched by synchronous_standby_names would be waited for by the commits it
        // waits to see: they would never end.
        let standbys = try connection.query("SELECT current_setting('synchronous_standby_names')", [], deadline: deadline)[0].decode(String.self, at: 0)
        if standbys.contains("*") {
            throw PostgresError(.invalidConfiguration, "synchronous_standby_names (\(TerminalText.escaped(standbys, limit: 100))) names every standby, which would make this feed one that commits wait for: name the standbys instead of '*'")
        }
        guard try row.decode(Bool.self, at: 2) else {
            let name = SQLIdentifier.quoted(role)
            throw PostgresError(.invalidConfiguration, "role \(TerminalText.escaped(name, limit: 100)) lacks the REPLICATION attribute logical replication needs: ALTER ROLE \(TerminalText.escaped(name, limit: 100)) WITH REPLICATION")
        }
        return try row.decode(Int.self, at: 3)
    }

    /// Makes `publication` (with no tables: ``LiveSchema/publish(_:on:publication:)`` adds them)
    /// unless it exists.
    private static func ensure(_ publication: String, on connection: FeedConnection, deadline: Duration) throws {
        let exists = try connection.query("SELECT 1 FROM pg_publication WHERE pubname = $1", [.text(publication)], deadline: deadline)
        guard exists.isEmpty else { return }
        do {
            try connection.execute("CREATE PUBLICATION \(SQLIdentifier.quoted(publication)) WITH (publish_via_partition_root = true)", deadline: deadline)
        } catch let error as PostgresError where error.sqlState == "42710" {
            // Another process made it meanwhile.
        }
    }
}
