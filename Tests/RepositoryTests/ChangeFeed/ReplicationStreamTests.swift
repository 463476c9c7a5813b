import Foundation
import PropertyBased
@testable import Repository
import Testing

/// The replication stream's decoding and state without a server: `pgoutput` messages as
/// PostgreSQL's "Logical Replication Message Formats" lays them out, in, announcements out.
@Suite("Replication stream")
struct ReplicationStreamTests {
    /// Builds a message byte by byte, big-endian.
    struct Bytes {
        var bytes: [UInt8] = []
        init(_ kind: Character) { bytes = [kind.asciiValue!] }
        func byte(_ value: UInt8) -> Bytes { var copy = self; copy.bytes.append(value); return copy }
        func int(_ value: UInt64, _ width: Int) -> Bytes {
            var copy = self
            copy.bytes += (0..<width).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
            return copy
        }
        func string(_ value: String) -> Bytes { var copy = self; copy.bytes += Array(value.utf8) + [0]; return copy }
        func tuple(_ cells: [String?]) -> Bytes {
            cells.reduce(int(UInt64(cells.count), 2)) { bytes, cell in
                guard let cell else { return bytes.byte(UInt8(ascii: "n")) }
                return bytes.byte(UInt8(ascii: "t")).int(UInt64(cell.utf8.count), 4).raw(Array(cell.utf8))
            }
        }
        func raw(_ more: [UInt8]) -> Bytes { var copy = self; copy.bytes += more; return copy }
    }

    static func begin(_ xid: UInt32) -> [UInt8] { Bytes("B").int(0x1000, 8).int(0, 8).int(UInt64(xid), 4).bytes }
    static func commit(_ end: UInt64) -> [UInt8] { Bytes("C").byte(0).int(end - 8, 8).int(end, 8).int(0, 8).bytes }
    /// `public.notes (id bigint key, body text)`, relation 16384; `public.members (user_id text, project_id bigint)`,
    /// keyed by both, 16385.
    static let notes = Bytes("R").int(16384, 4).string("public").string("notes").byte(UInt8(ascii: "d")).int(2, 2)
        .byte(1).string("id").int(20, 4).int(UInt64(UInt32.max), 4).byte(0).string("body").int(25, 4).int(UInt64(UInt32.max), 4).bytes
    static let members = Bytes("R").int(16385, 4).string("public").string("members").byte(UInt8(ascii: "d")).int(2, 2)
        .byte(1).string("user_id").int(25, 4).int(0, 4).byte(1).string("project_id").int(20, 4).int(0, 4).bytes

    func run(_ messages: [[UInt8]], keyOrder: [String]? = nil) throws -> (changes: [Change], transactions: [UInt32], through: UInt64)? {
        var stream = ReplicationStream()
        for bytes in messages {
            var message = try PgOutputMessage.decode(bytes)
            if let keyOrder, case .relation(let relation) = message { message = .relation(relation.withKey(keyOrder)) }
            try stream.receive(message)
        }
        return stream.take()
    }

    @Test("a transaction's inserts, updates and deletes become announcements at its commit, versioned by its id when a row changed once, 0 when more often")
    func transaction() throws {
        let insert = Bytes("I").int(16384, 4).byte(UInt8(ascii: "N")).tuple(["7", "seven"]).bytes
        let update = Bytes("U").int(16384, 4).byte(UInt8(ascii: "N")).tuple(["8", "eight"]).bytes
        let again = Bytes("U").int(16384, 4).byte(UInt8(ascii: "N")).tuple(["8", "eight!"]).bytes
        let delete = Bytes("D").int(16384, 4).byte(UInt8(ascii: "K")).tuple(["9", nil]).bytes
        var stream = ReplicationStream()
        for bytes in [Self.notes, Self.begin(500), insert, update, again, delete] { try stream.receive(try PgOutputMessage.decode(bytes)) }
        let early = stream.take()
        #expect(early == nil, "nothing before the commit")
        try stream.receive(try PgOutputMessage.decode(Self.commit(0x2000)))
        let next = stream.take()
        let taken = try #require(next)
        #expect(taken.through == 0x2000 && taken.transactions == [500])
        #expect(taken.changes == [
            Change(table: "public.notes", operation: .insert, key: .integer(7), version: 500),
            Change(table: "public.notes", operation: .update, key: .integer(8), version: 0),
            Change(table: "public.notes", operation: .delete, key: .integer(9), version: 500),
        ])
        let twice = stream.take()
        #expect(twice == nil, "taken once")
        // The commit's time (0 in these messages: PostgreSQL's epoch) is each change's.
        #expect(taken.changes.allSatisfy { $0.madeAt == Date(timeIntervalSince1970: 946_684_800) })
    }

    @Test("a composite key comes in the primary key's order; a changed key is the old row's delete and the new row's insert")
    func compositeKey() throws {
        let update = Bytes("U").int(16385, 4).byte(UInt8(ascii: "K")).tuple(["grace", "7"]).byte(UInt8(ascii: "N")).tuple(["hopper", "7"]).bytes
        let taken = try #require(try run([Self.members, Self.begin(9), update, Self.commit(0x3000)], keyOrder: ["project_id", "user_id"]))
        #expect(taken.changes == [
            Change(table: "public.members", operation: .delete, key: .composite([.integer(7), .text("grace")]), version: 9),
            Change(table: "public.members", operation: .insert, key: .composite([.integer(7), .text("hopper")]), version: 9),
        ])
    }

    @Test("a truncate names its tables; a change without its key stands for its whole table")
    func truncateAndKeyless() throws {
        let truncate = Bytes("T").int(1, 4).byte(0).int(16385, 4).bytes
        let keyless = Bytes("I").int(16384, 4).byte(UInt8(ascii: "N")).tuple([nil, "x"]).bytes
        let taken = try #require(try run([Self.members, Self.notes, Self.begin(3), truncate, keyless, Self.commit(0x4000)]))
        #expect(taken.changes.map(\.operation) == [.truncate, .truncate])
        #expect(taken.changes.map(\.table) == ["public.members", "public.notes"])
    }

    /// A logical message as `pg_logical_emit_message` writes it.
    static func message(_ prefix: String, _ content: String, transactional: Bool = true) -> [UInt8] {
        Bytes("M").byte(transactional ? 1 : 0).int(0x2000, 8).string(prefix).int(UInt64(content.utf8.count), 4).raw(Array(content.utf8)).bytes
    }

    @Test("a transactional message saying a partition was truncated is a truncate of the table it names; other messages are nothing")
    func partitionTruncated() throws {
        let messages = [Self.message("live.truncate", "public.events"), Self.message("live.truncate", "public.other", transactional: false),
                        Self.message("someone.else", "public.notes")]
        #expect(try PgOutputMessage.decode(messages[0]) == .message(transactional: true, prefix: "live.truncate", content: Array("public.events".utf8)))
        let taken = try #require(try run([Self.begin(4)] + messages + [Self.commit(0x5000)]))
        #expect(taken.changes.map(\.operation) == [.truncate] && taken.changes.map(\.table) == ["public.events"])
    }

    @Test("a table described again within a transaction: earlier changes keep its name as it was; a table dropped and made again under its name is one table (a row changed in both is versioned 0); a table with no key stands whole")
    func describedAgain() throws {
        let insert = Bytes("I").int(16384, 4).byte(UInt8(ascii: "N")).tuple(["7", "seven"]).bytes
        // Renamed within the transaction (same relation id, a new name).
        let renamed = Bytes("R").int(16384, 4).string("public").string("jottings").byte(UInt8(ascii: "d")).int(2, 2)
            .byte(1).string("id").int(20, 4).int(UInt64(UInt32.max), 4).byte(0).string("body").int(25, 4).int(UInt64(UInt32.max), 4).bytes
        let update = Bytes("U").int(16384, 4).byte(UInt8(ascii: "N")).tuple(["8", "eight"]).bytes
        let taken = try #require(try run([Self.notes, Self.begin(700), insert, renamed, update, Self.commit(0x5000)]))
        #expect(taken.changes == [
            Change(table: "public.notes", operation: .insert, key: .integer(7), version: 700),
            Change(table: "public.jottings", operation: .update, key: .integer(8), version: 700),
        ])
        // Dropped and made again (a new relation id, the same name): row 7 changed twice.
        let remade = Bytes("R").int(16390, 4).string("public").string("notes").byte(UInt8(ascii: "d")).int(2, 2)
            .byte(1).string("id").int(20, 4).int(UInt64(UInt32.max), 4).byte(0).string("body").int(25, 4).int(UInt64(UInt32.max), 4).bytes
        let insertAgain = Bytes("I").int(16390, 4).byte(UInt8(ascii: "N")).tuple(["7", "seven again"]).bytes
        let twice = try #require(try run([Self.notes, Self.begin(701), insert, remade, insertAgain, Self.commit(0x6000)]))
        #expect(twice.changes == [Change(table: "public.notes", operation: .insert, key: .integer(7), version: 0)])
        // No column marked as key (replica identity NOTHING): each change stands for the table.
        let unkeyed = Bytes("R").int(16391, 4).string("public").string("log").byte(UInt8(ascii: "n")).int(1, 2)
            .byte(0).string("line").int(25, 4).int(UInt64(UInt32.max), 4).bytes
        let line = Bytes("I").int(16391, 4).byte(UInt8(ascii: "N")).tuple(["hello"]).bytes
        let whole = try #require(try run([unkeyed, Self.begin(702), line, Self.commit(0x7000)]))
        #expect(whole.changes.map(\.operation) == [.truncate] && whole.changes.map(\.table) == ["public.log"])
    }

    @Test("a change of a table the stream never described, or outside a transaction, is an error, not a guess")
    func malformed() throws {
        let insert = Bytes("I").int(16384, 4).byte(UInt8(ascii: "N")).tuple(["7", "seven"]).bytes
        #expect(throws: PgOutputError.self) { try run([Self.begin(1), insert]) }
        #expect(throws: PgOutputError.self) { try run([Self.notes, insert]) }
        #expect(throws: PgOutputError.self) { try run([Self.commit(8)]) }
    }

    @Test("an update without the old row, of a table whose replica identity is another index than its key, also re-runs what follows the table: its key may have changed unseen")
    func identityOnAnotherIndex() throws {
        // public.accounts (id bigint, email text): the stream marks email (the identity); the key is id.
        let accounts = Bytes("R").int(16386, 4).string("public").string("accounts").byte(UInt8(ascii: "i")).int(2, 2)
            .byte(0).string("id").int(20, 4).int(UInt64(UInt32.max), 4).byte(1).string("email").int(25, 4).int(UInt64(UInt32.max), 4).bytes
        let keyChanged = Bytes("U").int(16386, 4).byte(UInt8(ascii: "N")).tuple(["97", "ada@example.com"]).bytes
        let taken = try #require(try run([accounts, Self.begin(600), keyChanged, Self.commit(0x3000)], keyOrder: ["id"]))
        #expect(taken.changes.map(\.operation) == [.update, .truncate])
        #expect(taken.changes.first?.key == .integer(97))
        // Keyed by its primary key (the default identity): the update alone.
        let update = Bytes("U").int(16384, 4).byte(UInt8(ascii: "N")).tuple(["8", "eight"]).bytes
        let plain = try #require(try run([Self.notes, Self.begin(601), update, Self.commit(0x4000)], keyOrder: ["id"]))
        #expect(plain.changes.map(\.operation) == [.update])
    }

    @Test("any prefix of a valid message, and random bytes, decode to a message or a PgOutputError — never a crash")
    func truncatedAndRandomBytes() async {
        let valid = [Self.notes, Self.members, Self.begin(5), Self.commit(99),
                     Bytes("U").int(16385, 4).byte(UInt8(ascii: "K")).tuple(["a", "1"]).byte(UInt8(ascii: "N")).tuple(["b", "1"]).bytes,
                     Bytes("T").int(2, 4).byte(0).int(1, 4).int(2, 4).bytes, Self.message("live.truncate", "public.events")]
        for message in valid {
            #expect(throws: Never.self) { _ = try PgOutputMessage.decode(message) }
            for length in 0..<message.count {
                if case .failure(let error) = Result(catching: { () throws -> PgOutputMessage in try PgOutputMessage.decode(message.prefix(length)) }) {
                    #expect(error is PgOutputError)
                }
            }
        }
        await propertyCheck(count: 2000, input: Gen.int(in: 0...255).map { UInt8($0) }.array(of: 0...64)) { bytes in
            if case .failure(let error) = Result(catching: { () throws -> PgOutputMessage in try PgOutputMessage.decode(bytes) }) { #expect(error is PgOutputError) }
        }
    }
}

extension ReplicationStreamTests {
    /// A tuple of binary cells; nil is NULL, `[]`… as given; `unchanged` marks a TOASTed value left alone.
    static func binary(_ cells: [[UInt8]?], unchanged: Int? = nil) -> (Bytes) -> Bytes {
        { start in
            cells.enumerated().reduce(start.int(UInt64(cells.count), 2)) { bytes, cell in
                if cell.offset == unchanged { return bytes.byte(UInt8(ascii: "u")) }
                guard let value = cell.element else { return bytes.byte(UInt8(ascii: "n")) }
                return bytes.byte(UInt8(ascii: "b")).int(UInt64(value.count), 4).raw(value)
            }
        }
    }

    static func int8(_ value: Int64) -> [UInt8] { (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }

    @Test("a row sent whole in binary form comes with its change, versioned and read as a read's row would be; not one changed twice, left partly unsent, or sent as text")
    func rowsWithChanges() throws {
        struct Note: Decodable, Equatable { var id: Int64; var body: String? }
        let update = { (id: Int64, body: String?, unchanged: Int?) in
            Self.binary([Self.int8(id), body.map { Array($0.utf8) }], unchanged: unchanged)(Bytes("U").int(16384, 4).byte(UInt8(ascii: "N"))).bytes
        }
        var stream = ReplicationStream()
        stream.epoch = 3
        for bytes in [Self.notes, Self.begin(500), update(7, "seven", nil), update(8, nil, nil), update(9, "x", 1), update(10, "a", nil),
                      update(10, "b", nil), Bytes("U").int(16384, 4).byte(UInt8(ascii: "N")).tuple(["11", "text"]).bytes, Self.commit(0x2000)] {
            try stream.receive(try PgOutputMessage.decode(bytes))
        }
        let taken = stream.take()
        let changes = try #require(taken).changes
        #expect(changes.map(\.key) == [.integer(7), .integer(8), .integer(9), .integer(10), .integer(11)])
        let rows = changes.map(\.row)
        #expect(rows.map { $0 != nil } == [true, true, false, false, false], "whole and binary, once: 7 and 8")
        let seven = try #require(rows[0])
        #expect(seven.version == 500 && seven.epoch == 3)
        #expect(try seven.result.decode(Note.self) == [Note(id: 7, body: "seven")])
        #expect(try rows[1]?.result.decode(Note.self) == [Note(id: 8, body: nil)])
        #expect(try seven.result[0].decode(Int64.self, column: RowVersion.column) == 500)
    }
}

/// When the change feed tries again: ``ReconnectPacing``, without a server.
@Suite("Reconnect pacing")
struct ReconnectPacingTests {
    @Test("a session refused soon after it opened, or cut on sight, waits a pause that doubles up to the maximum; one that ran for a while is followed at once, and the pause starts over")
    func pacing() {
        var pacing = ReconnectPacing(initial: .milliseconds(100), maximum: .milliseconds(400), settled: .seconds(1))
        let start = ContinuousClock.now
        var pauses: [Duration] = []
        for step in 0..<5 {
            pacing.opened(at: start + .seconds(step))
            pauses.append(pacing.ended(at: start + .seconds(step) + .milliseconds(10), refused: true))
        }
        #expect(pauses == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(400), .milliseconds(400)])
        pacing.opened(at: start + .seconds(10))
        #expect(pacing.ended(at: start + .seconds(12), refused: true) == .zero)  // ran 2 s: an outage, at once
        #expect(pacing.openFailed() == .milliseconds(100))  // the pause started over
        #expect(pacing.openFailed() == .milliseconds(200))
        pacing.opened(at: start + .seconds(20))
        #expect(pacing.ended(at: start + .seconds(20) + .milliseconds(1), refused: true) == .milliseconds(400))
        // A cut connection after 60 ms: at once, and the pause starts over; one cut on sight is paced.
        pacing.opened(at: start + .seconds(30))
        #expect(pacing.ended(at: start + .seconds(30) + .milliseconds(60), refused: false) == .zero)
        #expect(pacing.openFailed() == .milliseconds(100))
        pacing.opened(at: start + .seconds(40))
        #expect(pacing.ended(at: start + .seconds(40) + .milliseconds(1), refused: false) == .milliseconds(200))
    }

    @Test("random sequences: every pause is zero or between the initial and the maximum, and zero exactly after a session that ran at least `settled` (refused) or `quickLoss` (its connection lost)")
    func randomSequences() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            var pacing = ReconnectPacing(initial: .milliseconds(50), maximum: .seconds(2), settled: .seconds(1))
            var now = ContinuousClock.now
            for _ in 0..<50 {
                if Bool.random(using: &generator) {
                    let pause = pacing.openFailed()
                    #expect(pause >= .milliseconds(50) && pause <= .seconds(2))
                } else {
                    pacing.opened(at: now)
                    let ran = Duration.milliseconds(Int.random(in: 0...(Bool.random(using: &generator) ? 100 : 2000), using: &generator))
                    now += ran
                    let refused = Bool.random(using: &generator)
                    let pause = pacing.ended(at: now, refused: refused)
                    #expect((pause == .zero) == (ran >= (refused ? .seconds(1) : .milliseconds(50))))
                    #expect(pause == .zero || (pause >= .milliseconds(50) && pause <= .seconds(2)))
                }
            }
        }
    }
}
