/// A row's version, as live values hold it: the id of the transaction that wrote the row
/// (PostgreSQL's `xmin` system column).
///
/// Every write of a row, by anyone, gives it a new `xmin`, so no trigger and no `version`
/// column are needed to see that a row moved on. Versions are compared for equality only: a
/// transaction id says who wrote the row, not when the write committed.
enum RowVersion {
    /// The name reads give it: a column name no property's name maps to.
    static let column = "live.version"
    /// The select list of every read and write result: the row's columns, and its version (an
    /// `xid`, which decodes as an integer).
    static let rowAndVersion = #"*, xmin AS "live.version""#
    /// The condition that a write finds the row at the version in parameter `$index`.
    static func isAt(parameter index: Int) -> String { "xmin = $\(index)::xid" }
}
