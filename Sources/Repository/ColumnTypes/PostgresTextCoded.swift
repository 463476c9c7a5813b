/// A column type of this library that `Codable` and statement parameters carry as its
/// PostgreSQL text: in JSON a ``PostgresTime`` is `"12:30:00"`, a ``PostgresInet`` is
/// `"10.0.0.1/8"`, not an object of fields.
public protocol PostgresTextCoded: Codable, LosslessStringConvertible, SQLValueConvertible {
    /// The type's name in PostgreSQL, for error messages (`time`, `inet`).
    static var postgresTypeName: String { get }
}

extension PostgresTextCoded {
    /// Decodes the type's PostgreSQL text; an error names the type and the text.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let value = Self(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a PostgreSQL \(Self.postgresTypeName): \(text)")
        }
        self = value
    }

    /// Encodes its PostgreSQL text.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// Its PostgreSQL text.
    public var sqlValue: SQLValue { .text(description) }
}
