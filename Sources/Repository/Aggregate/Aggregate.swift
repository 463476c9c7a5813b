/// A value stored as one row of a root table plus an ordered collection of rows of a child
/// table — a person and their addresses, an order and its lines.
///
/// The repository reads the root row and its children together and writes back only what
/// changed: a root column, one child's column, or — for appending, removing and reordering
/// children — the child rows plus a write of the root row (a new version), in one transaction.
///
/// ```swift
/// struct Person: Aggregate {
///     struct Row: Record, Equatable { static let tableName = "people"; var id: Int64; var name: String }
///     static let parentColumn = "person_id"
///     static let positionColumn = "position"
///     var id: Int64
///     var name: String
///     var addresses: [Address]          // Address: Record with a client-chosen id (a UUID)
///     init(root: Row, children: [Address]) { (id, name, addresses) = (root.id, root.name, children) }
///     var root: Row { Row(id: id, name: name) }
///     var children: [Address] { addresses }
/// }
/// ```
///
/// The child table holds the root's key in ``parentColumn`` (a foreign key, ideally with
/// `ON DELETE CASCADE`) and each child's index in ``positionColumn``. The root's primary key is
/// one column, of any name; the child's is any primary key — one including ``parentColumn``
/// too, whose column the child then holds as a property (an appended child is written with
/// the aggregate's id and its index, whatever its own parent and position properties say).
/// Both tables are enabled
/// (``LiveSchema/enable(_:on:)``); rows are versioned by `xmin`. Children get their ids from the
/// client (use UUIDs), so a child appended locally can be followed by id at once.
public protocol Aggregate: Identifiable, Equatable, Sendable where ID == Root.ID, Root.ID: Comparable & SQLValueConvertible {
    /// The root row's record type.
    associatedtype Root: Record & Equatable
    /// The child rows' record type.
    associatedtype Child: Record & Equatable
    /// The child table's column holding the root's id.
    static var parentColumn: String { get }
    /// The child table's integer column holding each child's index, from 0.
    static var positionColumn: String { get }
    /// The root row's part of the value.
    var root: Root { get }
    /// The children, in order.
    var children: [Child] { get }
    /// The value made of a root row and its children in order.
    init(root: Root, children: [Child])
}
