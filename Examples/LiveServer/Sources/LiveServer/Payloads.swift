import AddressBookKit
import Foundation
import Hummingbird

/// `PATCH /people/{id}`'s body.
struct PersonPatch: Decodable {
    var name: String
}

/// A 409's body: the columns both writers changed, and both values.
struct Conflict: Encodable {
    var error = "another writer changed this person first"
    var columns: [String]
    var ours: Person?
    var theirs: Person?
}

extension Response {
    /// `value` as a JSON response.
    static func json(_ value: some Encodable, status: HTTPResponse.Status) throws -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(string: try jsonText(value))))
    }

    /// `value` as one line of JSON.
    static func jsonText(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}

extension Person: @retroactive ResponseEncodable {}
