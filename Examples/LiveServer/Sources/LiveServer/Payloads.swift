import AddressBookKit
import Foundation
import Hummingbird
import Repository

/// `PATCH /people/{id}`'s body.
struct PersonPatch: Decodable {
    var name: String

    /// Throws a 400 for a name the address book should not hold.
    func validate() throws {
        if name.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            throw HTTPError(.badRequest, message: "a name cannot be empty")
        }
        // Counted in Unicode scalars: a character can hold any number of combining marks.
        if name.unicodeScalars.count > 200 { throw HTTPError(.badRequest, message: "a name has at most 200 characters") }
        if name.unicodeScalars.contains("\0") { throw HTTPError(.badRequest, message: "a name cannot hold a NUL character") }
    }
}

/// A `LIKE` pattern matching the names that start with `prefix` (its `%`, `_` and `\` escaped);
/// a 400 for a prefix longer than a name can be.
func likePrefix(_ prefix: String) throws -> String {
    guard prefix.unicodeScalars.count <= 200 else { throw HTTPError(.badRequest, message: "a prefix has at most 200 characters") }
    guard !prefix.unicodeScalars.contains("\0") else { throw HTTPError(.badRequest, message: "a prefix cannot hold a NUL character") }
    var pattern = ""
    for character in prefix {
        if character == "%" || character == "_" || character == "\\" { pattern.append("\\") }
        pattern.append(character)
    }
    return pattern + "%"
}

extension LiveRecordError {
    /// The row was deleted.
    var isDeletion: Bool {
        if case .deleted = self { true } else { false }
    }

    /// Why the database refused the write for what it holds — a constraint (SQLSTATE class 23),
    /// a value its type cannot take (22), a trigger's exception (P0001) —, which the same write
    /// would meet again; nil for a failure a retry may get past (a lost connection, a timeout).
    var databaseRefusal: String? {
        guard case .writeFailed(_, _, let error) = self, !mayHaveCommitted, error.kind == .server, let state = error.sqlState,
              state.hasPrefix("23") || state.hasPrefix("22") || state == "P0001" else { return nil }
        return error.message
    }
}

/// A 409's body: the columns both writers changed, and both values.
struct Conflict: Encodable {
    var error = "another writer changed this person first"
    var columns: [String]
    var ours: Person?
    var theirs: Person?
}

extension Response {
    /// `value` as a JSON response, tagged with `version` (`ETag`) when given.
    static func json(_ value: some Encodable, status: HTTPResponse.Status, version: CommittedVersion? = nil) throws -> Response {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let version { headers[.eTag] = EntityTag.of(version) }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: try jsonText(value))))
    }

    /// `value` as one line of JSON.
    static func jsonText(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}

extension Person: @retroactive ResponseEncodable {}

/// `GET /people/events`'s `snapshot` event: everyone, in order.
struct Snapshot<Element: Encodable>: Encodable {
    var people: [Element]
}

/// `GET /people/events`'s `changes` event: the people inserted or changed, in order, and the
/// ids removed.
struct ListChange<Element: Encodable>: Encodable {
    var people: [PlacedPerson<Element>]
    var removed: [Int64]
}

/// A person and where they go: after the person with id `after` (nil: first).
struct PlacedPerson<Element: Encodable>: Encodable {
    var after: Int64?
    var person: Element

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(after, forKey: .after)   // null, not left out: "first"
        try container.encode(person, forKey: .person)
    }

    private enum CodingKeys: String, CodingKey { case after, person }
}
