/// What keeps a `Var` in sync with a database; nil for a plain in-memory `Var`.
@usableFromInline
protocol VarPersistence: AnyObject, Sendable {
    /// Waits until every change made so far is durable; throws what failed since the last save.
    func save() async throws
    /// Whether the row behind the value still exists.
    var state: LiveState { get }
    /// The version of the committed rows behind the value; nil when there is no one row set.
    var committedVersion: CommittedVersion? { get }
}

extension VarPersistence {
    @usableFromInline var committedVersion: CommittedVersion? { nil }
}

/// Whether the row behind a live `Var` still exists.
public enum LiveState: Sendable, Hashable {
    /// The row exists; the value follows it.
    case live
    /// The row was deleted. The value is the row as it last was; writes are reverted and reported.
    case deleted
}

extension Var {
    /// Waits until every change made through this `Var` (or any reference into the same live
    /// record) is durable, and throws what went wrong since the last `save()` — a constraint
    /// violation, a conflict, a deleted row, a lost connection. A failed edit is also thrown by
    /// the next `save()` of the task that made it, whatever other tasks' calls threw: a task's
    /// `save()` that returns means the edits it made since its last throwing `save()` are
    /// durable (see the *Sync Semantics* article for the exact rules, such as the 32 failures
    /// kept per value for tasks that do not come back). For a plain in-memory
    /// `Var`, returns at once.
    public func save() async throws {
        try await persistence?.save()
    }

    /// For a `Var` read from a database, whether its row still exists; nil for a plain `Var`.
    public var liveState: LiveState? { persistence?.state }
}

extension Author {
    /// A change read from the database: made by another connection or process, or the
    /// database's state restored after a conflict.
    public static let database = Author("database")
    /// A local change undone because it could not be written; observers see the database's
    /// state again.
    public static let revert = Author("revert")
    /// The row was deleted; the value is unchanged.
    public static let deletion = Author("deletion")
}

extension Optional where Wrapped == Author {
    /// Whether the change came from the database (a re-read, a revert, a deletion) rather than
    /// from a local edit that must be written.
    var isFromDatabase: Bool { self == .database || self == .revert || self == .deletion }
}
