/// A record as the sync engine sees it: one row whose fields are its writable properties.
///
/// Fields are compared as the database holds them (each column's SQL text: a `Double` by its
/// shortest exact text, so NaN equals NaN; a `Date` to the microsecond), and merged without
/// re-encoding (``ExactMerge``): a merged record takes the edited properties from ours and
/// every other bit from theirs.
@usableFromInline
enum RecordContent<R: Record>: SyncContent {
    @usableFromInline typealias Value = R
    @usableFromInline typealias Field = String
    @usableFromInline typealias Version = Int64

    @usableFromInline static func fields(changedFrom old: R, to new: R) throws -> Set<String> {
        try RecordColumns(new).writableChanges(since: RecordColumns(old))
    }

    @inlinable static func differing(_ a: R, _ b: R, among fields: Set<String>) -> Set<String> {
        guard !fields.isEmpty else { return [] }
        // A record that cannot be encoded could not have been written: counting every field as
        // differing makes the engine write (and fail loudly on) or report them, never skip them.
        guard let a = try? RecordColumns(a), let b = try? RecordColumns(b) else { return fields }
        return a.changedProperties(since: b).intersection(fields)
    }

    @usableFromInline static func replacing(_ fields: Set<String>, in target: R, from source: R) throws -> R {
        try ExactMerge.replacing(fields, in: target, from: source)
    }

    /// Whether the two differ as the database holds them. `==` cannot tell: `String`'s is
    /// canonical equivalence (a precomposed `é` equals `e` and a combining accent, which the
    /// database stores, sorts and compares as different text), `Double`'s makes `0.0` equal to
    /// `-0.0`, and a type's own may compare only some properties. So unless the two are the
    /// same bit for bit, their columns are compared as stored (NaN is NaN; a `Date` is kept to
    /// the microsecond). One that cannot be encoded counts as changed: observers hear of it.
    @inlinable static func differs(_ a: R, _ b: R) -> Bool {
        if isBitwiseIdentical(a, b) { return false }
        guard let a = try? RecordColumns(a), let b = try? RecordColumns(b) else { return true }
        return !a.changedProperties(since: b).isEmpty
    }

    /// Two rows as read that `==` tells apart, each equal to itself (no NaN in either), differ
    /// as stored: their dates came from the database, to the microsecond, so no encoding is
    /// needed to know. The rest goes through ``differs(_:_:)``.
    @inlinable static func differsAsRead(_ a: R, _ b: R) -> Bool {
        if unequalAndEachSelfEqual(a, b) { return true }
        return differs(a, b)
    }

    /// A record's write is `UPDATE … WHERE <key> AND xmin = <the base's version>`.
    @usableFromInline static var writeCommitsRightAfterBase: Bool { true }

    /// The column the property is stored in (a conflict names columns).
    @usableFromInline static func name(of field: String) -> String { R.columnNaming.columnName(field) }

    @usableFromInline static func rowVersion(_ version: Int64) -> Int64 { version }
}
