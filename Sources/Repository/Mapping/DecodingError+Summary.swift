extension DecodingError {
    /// What went wrong, in a few words, with where in the JSON (`at "spec.size"`) — without
    /// Swift's debug description, its coding path dump and underlying error.
    var summary: String {
        switch self {
        case .keyNotFound(let key, let context):
            return "missing \"\(key.stringValue)\"" + Self.place(context, prefix: " in ")
        case .valueNotFound(let type, let context):
            return "null where \(Self.kind(type)) is expected" + Self.place(context, prefix: " at ")
        case .typeMismatch(let type, let context):
            return "expected \(Self.kind(type))" + Self.place(context, prefix: " at ")
        case .dataCorrupted(let context):
            return (context.codingPath.isEmpty ? "invalid JSON" : "invalid value") + Self.place(context, prefix: " at ")
        @unknown default:
            return "invalid"
        }
    }

    /// JSON's name for what a decoder's container asks for; the Swift type otherwise.
    private static func kind(_ type: Any.Type) -> String {
        if type == [String: Any].self { return "an object" }
        if type == [Any].self { return "an array" }
        return "\(type)"
    }

    private static func place(_ context: Context, prefix: String) -> String {
        context.codingPath.isEmpty ? "" : prefix + "\"" + context.codingPath.map(\.stringValue).joined(separator: ".") + "\""
    }
}
