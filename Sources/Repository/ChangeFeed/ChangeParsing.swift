import Foundation

/// Turns notification payloads into changes, keeping the latest per (table, key).
struct ChangeBatch {
    private(set) var changes: [Change] = []
    private(set) var ignored: [(payload: String, reason: String)] = []
    private var indexByKey: [Key: Int] = [:]

    private struct Key: Hashable {
        let table: String
        let key: ChangeKey
    }

    var isEmpty: Bool { changes.isEmpty && ignored.isEmpty }

    /// The most a payload may hold: PostgreSQL's own limit is 8000 bytes.
    static let maximumPayload = 8000

    mutating func add(payload: String) {
        guard payload.utf8.count <= Self.maximumPayload else {
            return ignored.append((String(payload.prefix(200)), "longer than \(Self.maximumPayload) bytes"))
        }
        let change: Change
        do {
            change = try Change.fastParse(payload) ?? JSONDecoder().decode(Change.self, from: Data(payload.utf8))
        } catch {
            return ignored.append((String(payload.prefix(200)), "not a change announcement: \(Self.reason(error))"))
        }
        guard !change.table.isEmpty, change.version >= 0 else {
            return ignored.append((String(payload.prefix(200)), "empty table or negative version"))
        }
        let key = Key(table: change.table, key: change.key)
        if let index = indexByKey[key] {
            let previous = changes[index]
            changes[index] = Change(table: change.table, operation: change.operation, key: change.key,
                                    version: max(previous.version, change.version))
        } else {
            indexByKey[key] = changes.count
            changes.append(change)
        }
    }

    private static func reason(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "missing \"\(key.stringValue)\""
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "wrong type at \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\""
        case DecodingError.dataCorrupted(let context):
            context.codingPath.isEmpty ? "invalid JSON" : "invalid value at \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\""
        default: "invalid"
        }
    }
}
