import Foundation

/// Why a live record could not be read or written.
///
/// `table` names the table as a message shows it: schema and name, each in double quotes
/// where it is not a plain lowercase identifier (`public.people`, `public."odd.name"`), control
/// characters escaped; a live SQL query's tables as a list of those (`public.orders,
/// public.people`). `key` is the row's key as the identity map names it: a single value's
/// text, or a JSON array of a composite key's values' texts (`["7","grace"]`).
public enum LiveRecordError: Error, Sendable, CustomStringConvertible {
    /// No row has this key.
    case notFound(table: String, key: String)
    /// The row was deleted; the write was reverted.
    case deleted(table: String, key: String)
    /// The database refused the write (a constraint, a lost connection…); the handle was
    /// reverted to the database's state.
    case writeFailed(table: String, key: String, PostgresError)
    /// Another writer changed the same columns first. `ours` and `theirs` are the two values
    /// (of the record's type); which one the handle now holds follows the ``ConflictPolicy``.
    case conflict(table: String, key: String, columns: [String], ours: any Sendable, theirs: any Sendable, policy: ConflictPolicy)
    /// The listening connection was lost; live handles are re-read once it is back.
    case changeFeedDisconnected(PostgresError)
    /// Not a failure: the change feed is listening again, and every live row was re-read — or,
    /// when logical replication resumed its slot, the changes made meanwhile follow.
    case changeFeedReconnected
    /// Re-reading rows after a change announcement failed. When the cause can pass (a lost
    /// connection, a timeout, a missing privilege…), everything live is read again shortly
    /// after (100 ms; while that keeps failing, twice as long each time, up to 30 s); in any
    /// case at the feed's next reconnection, or when the rows change again.
    case refreshFailed(table: String, any Error)
    /// An element was added to or removed from a live query's result, or moved where the
    /// query's order does not put it. Rows enter and leave a query through the database
    /// (insert, update or delete the row), and take the place its order gives them; the result
    /// was restored.
    case membershipIsReadOnly(table: String)

    /// A failed write whose `UPDATE` may still have committed: the connection was lost after
    /// it was sent (``PostgresError/statementDidNotRun`` is false). The handle shows the row as
    /// last read; if the write did commit, that change reaches the handle as any other
    /// process's does.
    public var mayHaveCommitted: Bool {
        guard case .writeFailed(_, _, let error) = self else { return false }
        return error.kind == .connectionLost && !error.statementDidNotRun
    }

    /// One sentence.
    public var description: String {
        switch self {
        case .notFound(let table, let key): "no row in \(Self.shown(table: table)) has \(Self.compositeParts(key) == nil ? "id" : "key") \(Self.shown(key: key))"
        case .deleted(let table, let key): "\(Self.shown(table: table)) row \(Self.shown(key: key)) was deleted; the write was reverted"
        case .writeFailed(let table, let key, let error) where mayHaveCommitted:
            "writing \(Self.shown(table: table)) row \(Self.shown(key: key)) may have committed: the connection was lost after the UPDATE was sent; the handle shows the row as last read until it is read again: \(error)"
        case .writeFailed(let table, let key, let error): "writing \(Self.shown(table: table)) row \(Self.shown(key: key)) failed and was reverted: \(error)"
        case .conflict(let table, let key, let columns, _, _, let policy):
            "\(Self.shown(table: table)) row \(Self.shown(key: key)): another writer changed \(columns.map { Self.shown($0) }.joined(separator: ", ")) first; \(policy == .databaseWins ? "the database's values were kept" : "this process's values were written")"
        case .changeFeedDisconnected(let error) where error.kind == .invalidConfiguration:
            "the change feed cannot follow changes, and tries again: \(error)"
        case .changeFeedDisconnected(let error) where error.kind == .connectionLost:
            "the change feed lost its connection and is reconnecting: \(error)"
        case .changeFeedDisconnected(let error): "the change feed could not start following changes, and tries again: \(error)"
        case .changeFeedReconnected: "the change feed is listening again; live rows are brought up to date (re-read, or from the changes a resumed replication slot delivers)"
        case .refreshFailed(let table, let error): "re-reading changed rows of \(Self.shown(table: table)) failed: \(error)"
        case .membershipIsReadOnly(let table):
            "a live query over \(Self.shown(table: table)) was restored: rows join or leave it through the database and are placed by its order, not by editing the result"
        }
    }

    /// A key or column as a message shows it: plain when plain, otherwise quoted, with
    /// control characters escaped (`"odd \"name\""`).
    private static func shown(_ name: String) -> String { TerminalText.name(name) }

    /// A table as a message shows it: the library names tables with each part quoted where it
    /// needs to be (`public."odd.name"`), which is shown as it is, control characters escaped.
    private static func shown(table: String) -> String {
        // Shown already (quoted where needed): escaped once more, as text from outside. A list
        // of such names (a live SQL query's tables, `public.orders, public.people`) stays a list.
        if table.contains("\"") { return TerminalText.escaped(table, limit: 400) }
        return table.components(separatedBy: ", ").map { TerminalText.name($0) }.joined(separator: ", ")
    }

    /// A key as a message shows it: a composite key's values in parentheses, each shown as a
    /// name is (`(7, "Main street")`); a single value as a name.
    private static func shown(key: String) -> String {
        compositeParts(key).map { parts in "(" + parts.map { shown($0) }.joined(separator: ", ") + ")" } ?? shown(key)
    }

    /// A composite key's values: the identity map names such a key as a JSON array of their texts.
    private static func compositeParts(_ key: String) -> [String]? {
        guard key.hasPrefix("[\""), let parts = try? JSONDecoder().decode([String].self, from: Data(key.utf8)), parts.count > 1 else { return nil }
        return parts
    }
}

/// What happens when another writer changed the same columns as a local edit.
public enum ConflictPolicy: Sendable, Hashable {
    /// Keep the database's values and drop the local edit of those columns (the default).
    case databaseWins
    /// Write the local values over the other writer's.
    case localWins
}
