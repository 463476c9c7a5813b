/// The version of the committed rows behind a live value, as this process last read or wrote
/// them: each row's `xmin`, the id of the transaction that last wrote it.
///
/// Every write of those rows, by anyone, gives a new version here once this process has read
/// it (after the change is announced and the row re-read, or after its own write). Versions are
/// compared for equality only — a transaction id says who wrote a row, not when — which is what
/// an HTTP entity tag needs: the example server sends one as `ETag` and checks `If-Match`
/// against it.
public struct CommittedVersion: Hashable, Sendable, CustomStringConvertible {
    /// Each row's `xmin`: a record's row; an aggregate's root row, then its children's rows in
    /// the aggregate's order.
    public let rows: [Int64]

    /// The versions joined by dots (`"7311"`, `"7311.7302.7309"`): fit for an entity tag.
    public var description: String { rows.map(String.init).joined(separator: ".") }

    /// A version made of these rows' versions.
    public init(rows: [Int64]) {
        self.rows = rows
    }
}

extension Var {
    /// For a `Var` onto a live record or aggregate (from `read(id:)`, or a reference into one),
    /// the version of the committed rows its value last came from; nil for a plain `Var`, and
    /// for a live query's list and its elements (read an element with `read(id:)`: the same
    /// shared store, with its version).
    ///
    /// Unsaved local edits do not change it: it moves when a write commits or a newer row is
    /// read. Read it before and after `value` to pair the two consistently.
    public var committedVersion: CommittedVersion? { persistence?.committedVersion }
}
