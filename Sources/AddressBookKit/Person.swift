public import Foundation
public import Repository

/// Someone in the address book, with their addresses in order: one `people` row and its
/// `addresses` rows, read and written as one value.
///
/// ```swift
/// let person = try await book.readPerson(id: 42)
/// person[\.name].value = "Ada Lovelace"                          // UPDATE people SET name …
/// person[\.addresses][0][\.street].value = "12 St James's Sq"    // UPDATE that address row
/// person[\.addresses].value.append(Address(street: "Ockham Park"))  // INSERT, in one transaction
/// ```
public struct Person: Aggregate, Codable, Hashable {
    /// The `people` row.
    public struct Row: Record, Equatable {
        /// `people`.
        public static let tableName = "people"
        /// The key.
        public var id: Int64
        /// The person's name.
        public var name: String
    }

    /// `addresses.person_id`.
    public static let parentColumn = "person_id"
    /// `addresses.position`.
    public static let positionColumn = "position"

    /// The key, chosen by the database when the person is added.
    public var id: Int64
    /// The person's name.
    public var name: String
    /// Their addresses, in order.
    public var addresses: [Address]

    /// A person with these values (to compare with; people are added with ``AddressBook/addPerson(name:streets:)``).
    public init(id: Int64, name: String, addresses: [Address] = []) {
        self.id = id
        self.name = name
        self.addresses = addresses
    }

    /// The person made of a `people` row and their address rows.
    public init(root: Row, children: [Address]) {
        self.init(id: root.id, name: root.name, addresses: children)
    }

    /// The `people` row's part.
    public var root: Row { Row(id: id, name: name) }
    /// The addresses.
    public var children: [Address] { addresses }
}

/// One of a person's addresses: an `addresses` row.
public struct Address: Record, Codable, Hashable {
    /// `addresses`.
    public static let tableName = "addresses"
    /// The key, chosen here so a new address can be followed by id before it is written.
    public var id: UUID
    /// The street address.
    public var street: String

    /// A new address (with a fresh id) or an existing one.
    public init(id: UUID = UUID(), street: String) {
        self.id = id
        self.street = street
    }
}
