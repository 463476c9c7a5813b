import Foundation

/// Turns notification payloads into changes, keeping the latest per (table, key).
///
/// Three payload shapes are understood: one statement (`{"table", "op", "keys", "version"}`
/// since migration 0005, every key at the writing transaction's version), perhaps with
/// `"more": true` when the statement's next part follows; `{"table", "op": "truncate"}`; and,
/// while a database is upgraded, the shapes of migrations 0001 (`{"table", "op", "key",
/// "version"}`) and 0004 (`{"table", "op", "keys", "versions"}`). Their versions count a
/// `version` column, which may equal a row's `xmin` by chance: they are taken as 0, unknown.
struct ChangeBatch {
    private(set) var changes: [Change] = []
    private(set) var ignored: [(payload: String, reason: String)] = []
    /// Where each table's keys are in ``changes``: a table's name is hashed once per payload,
    /// not once per key.
    private var indexByKey: [String: [ChangeKey: Int]] = [:]
    /// The last payload said another part of its statement follows.
    private(set) var awaitsMore = false

    var isEmpty: Bool { changes.isEmpty && ignored.isEmpty }

    /// The most a payload may hold: PostgreSQL's own limit is 8000 bytes.
    static let maximumPayload = 8000

    /// How many payloads were added.
    private(set) var payloads = 0

    mutating func add(payload: String) {
        payloads += 1
        awaitsMore = false
        guard payload.utf8.count <= Self.maximumPayload else {
            return ignored.append((String(payload.prefix(200)), "longer than \(Self.maximumPayload) bytes"))
        }
        let announcement: Announcement
        do {
            announcement = try Announcement.fastParse(payload) ?? JSONDecoder().decode(Announcement.self, from: Data(payload.utf8))
            try announcement.validate()
        } catch {
            return ignored.append((String(payload.prefix(200)), "not a change announcement: \(Self.reason(error))"))
        }
        awaitsMore = announcement.more ?? false
        // In place, the table's entry looked up once for all its keys.
        indexByKey[announcement.table, default: [:]].fold(announcement.changes, into: &changes)
    }

    /// A change read from elsewhere than a notification (the replication stream).
    mutating func add(_ change: Change) {
        indexByKey[change.table, default: [:]].fold(change, into: &changes)
    }
}

extension [ChangeKey: Int] {
    /// Keeps one change per (table, key) in `kept`, this dictionary being where one table's
    /// keys are: the last one, except that a row deleted or inserted on the way counts as
    /// inserted (or deleted, if that came last) — a new row, whatever its version says.
    fileprivate mutating func fold(_ changes: [Change], into kept: inout [Change]) {
        for change in changes { fold(change, into: &kept) }
    }

    /// ``fold(_:into:)`` of one change.
    fileprivate mutating func fold(_ change: Change, into kept: inout [Change]) {
        guard let index = self[change.key] else {
            self[change.key] = kept.count
            return kept.append(change)
        }
        let previous = kept[index]
        let operation: Change.Operation = previous.operation == change.operation || change.operation == .delete || change.operation == .truncate
            ? change.operation
            : (previous.operation == .update ? change.operation : .insert)
        var folded = Change(table: change.table, operation: operation, key: change.key, version: change.version, madeAt: change.madeAt)
        // The last row the stream delivered is the row now (an insert after a delete included).
        if operation != .delete && operation != .truncate { folded.row = change.row }
        kept[index] = folded
    }
}

extension ChangeBatch {
    private static func reason(_ error: any Error) -> String {
        switch error {
        case let error as Announcement.Invalid: error.reason
        case let error as DecodingError: error.summary
        default: "invalid"
        }
    }
}

/// One notification payload: a row's change, or a statement's changes.
struct Announcement: Decodable {
    var table: String
    var op: Change.Operation
    var key: ChangeKey?
    var version: Int64?
    var keys: [ChangeKey]?
    var versions: [Int64]?
    var more: Bool?
    /// When the statement ran, µs since 1970.
    var at: Int64?

    struct Invalid: Error {
        let reason: String
    }

    func validate() throws {
        guard !table.isEmpty else { throw Invalid(reason: "empty table") }
        if op == .truncate {
            guard key == nil, version == nil, keys == nil, versions == nil else { throw Invalid(reason: "a truncate names no rows") }
            return
        }
        if let version {
            guard (key == nil) != (keys == nil), versions == nil, keys?.isEmpty != true, version >= 0 else {
                throw Invalid(reason: "negative version, or a version with both key and keys, or neither")
            }
            return
        }
        guard key == nil, let keys, let versions, keys.count == versions.count, !keys.isEmpty else {
            throw Invalid(reason: "needs key and version, keys and a version, or keys and versions of the same length")
        }
        guard versions.allSatisfy({ $0 >= 0 }) else { throw Invalid(reason: "negative version") }
    }

    var changes: [Change] {
        let madeAt = at.map { Date(timeIntervalSince1970: Double($0) / 1_000_000) }
        if op == .truncate { return [Change(table: table, operation: .truncate, key: .text(""), version: 0, madeAt: madeAt)] }
        if let key { return [Change(table: table, operation: op, key: key, version: 0, madeAt: madeAt)] }
        if let version { return (keys ?? []).map { Change(table: table, operation: op, key: $0, version: version, madeAt: madeAt) } }
        return (keys ?? []).map { Change(table: table, operation: op, key: $0, version: 0, madeAt: madeAt) }
    }

    /// The announcement, read without `JSONDecoder` when it has the usual shape.
    static func fastParse(_ payload: String) -> Announcement? {
        guard let members = FlatJSON.members(payload),
              case .string(let table)? = members["table"], case .string(let op)? = members["op"],
              let operation = Change.Operation(rawValue: op)
        else { return nil }
        var announcement = Announcement(table: table, op: operation)
        for (name, value) in members {
            switch (name, value) {
            case ("table", _), ("op", _): continue
            case ("key", let value): guard let key = ChangeKey(value) else { return nil }; announcement.key = key
            case ("version", .number(let version)): announcement.version = version
            case ("keys", .array(let values)):
                let keys = values.compactMap(ChangeKey.init)
                guard keys.count == values.count else { return nil }
                announcement.keys = keys
            case ("versions", .array(let values)):
                let versions = values.compactMap { if case .number(let version) = $0 { version } else { nil } }
                guard versions.count == values.count else { return nil }
                announcement.versions = versions
            case ("more", .bool(let more)): announcement.more = more
            case ("at", .number(let at)): announcement.at = at
            default: return nil
            }
        }
        return announcement
    }
}

extension ChangeKey {
    init?(_ value: FlatJSON.Value) {
        switch value {
        case .number(let number): self = .integer(number)
        case .string(let text): self = .text(text)
        default: return nil
        }
    }
}
