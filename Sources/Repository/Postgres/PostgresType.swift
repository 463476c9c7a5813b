/// A PostgreSQL data type, identified by its OID.
public struct PostgresType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The type's OID in `pg_type`.
    public let rawValue: UInt32

    /// The type with OID `rawValue`.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `bool`
    public static let bool = PostgresType(rawValue: 16)
    /// `bytea`
    public static let bytea = PostgresType(rawValue: 17)
    /// `"char"`
    public static let char = PostgresType(rawValue: 18)
    /// `name`
    public static let name = PostgresType(rawValue: 19)
    /// `bigint`
    public static let int8 = PostgresType(rawValue: 20)
    /// `smallint`
    public static let int2 = PostgresType(rawValue: 21)
    /// `integer`
    public static let int4 = PostgresType(rawValue: 23)
    /// `text`
    public static let text = PostgresType(rawValue: 25)
    /// `oid`
    public static let oid = PostgresType(rawValue: 26)
    /// `xid`, a 32-bit transaction id (the type of a row's `xmin`); decodes as an integer.
    public static let xid = PostgresType(rawValue: 28)
    /// `json`
    public static let json = PostgresType(rawValue: 114)
    /// `real`
    public static let float4 = PostgresType(rawValue: 700)
    /// `double precision`
    public static let float8 = PostgresType(rawValue: 701)
    /// `unknown`, the type of an untyped literal
    public static let unknown = PostgresType(rawValue: 705)
    /// `character(n)`
    public static let bpchar = PostgresType(rawValue: 1042)
    /// `character varying`
    public static let varchar = PostgresType(rawValue: 1043)
    /// `date`
    public static let date = PostgresType(rawValue: 1082)
    /// `timestamp without time zone`
    public static let timestamp = PostgresType(rawValue: 1114)
    /// `timestamp with time zone`
    public static let timestamptz = PostgresType(rawValue: 1184)
    /// `numeric`
    public static let numeric = PostgresType(rawValue: 1700)
    /// `uuid`
    public static let uuid = PostgresType(rawValue: 2950)
    /// `jsonb`
    public static let jsonb = PostgresType(rawValue: 3802)

    private static let names: [UInt32: String] = [
        16: "bool", 17: "bytea", 18: "char", 19: "name", 20: "bigint", 21: "smallint", 23: "integer",
        25: "text", 26: "oid", 28: "xid", 114: "json", 700: "real", 701: "double precision", 705: "unknown",
        1042: "character", 1043: "character varying", 1082: "date", 1114: "timestamp",
        1184: "timestamptz", 1186: "interval", 1700: "numeric", 2950: "uuid", 3802: "jsonb",
        1000: "bool[]", 1001: "bytea[]", 1005: "smallint[]", 1007: "integer[]", 1009: "text[]",
        1015: "varchar[]", 1016: "bigint[]", 1021: "real[]", 1022: "double precision[]",
        1115: "timestamp[]", 1182: "date[]", 1185: "timestamptz[]", 1231: "numeric[]",
        2951: "uuid[]", 3807: "jsonb[]", 199: "json[]", 1014: "character[]", 1003: "name[]",
    ]

    /// Whether this is one of the built-in array types.
    public var isArray: Bool { Self.names[rawValue]?.hasSuffix("[]") ?? false }

    /// Whether values of this type are text in the binary protocol.
    var isTextual: Bool { [Self.text, .varchar, .bpchar, .name, .unknown, .json, .char].contains(self) }

    /// The type's SQL name, or `oid N` for types this library does not know by name.
    public var description: String { Self.names[rawValue] ?? "oid \(rawValue)" }
}
