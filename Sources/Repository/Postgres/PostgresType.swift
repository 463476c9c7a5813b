/// A PostgreSQL data type, identified by its OID.
///
/// Types this library knows by OID have their SQL name here; any other type a result holds
/// (an enum, a composite, a range, an extension's type) is looked up in the server's catalog
/// once per pool, so its name and kind travel with the result's columns. Two values are equal
/// when their OIDs are.
public struct PostgresType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The type's OID in `pg_type`.
    public let rawValue: UInt32
    /// What the catalog says of a type not known here by OID; nil when not looked up.
    let details: TypeDetails?

    /// The type with OID `rawValue`.
    public init(rawValue: UInt32) { self.init(rawValue: rawValue, details: nil) }

    init(rawValue: UInt32, details: TypeDetails?) {
        self.rawValue = rawValue
        self.details = details
    }

    /// Equal OIDs.
    public static func == (a: PostgresType, b: PostgresType) -> Bool { a.rawValue == b.rawValue }

    /// Hashes the OID.
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

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
    /// `point`
    public static let point = PostgresType(rawValue: 600)
    /// `cidr`
    public static let cidr = PostgresType(rawValue: 650)
    /// `real`
    public static let float4 = PostgresType(rawValue: 700)
    /// `double precision`
    public static let float8 = PostgresType(rawValue: 701)
    /// `unknown`, the type of an untyped literal
    public static let unknown = PostgresType(rawValue: 705)
    /// `money`
    public static let money = PostgresType(rawValue: 790)
    /// `inet`
    public static let inet = PostgresType(rawValue: 869)
    /// `character(n)`
    public static let bpchar = PostgresType(rawValue: 1042)
    /// `character varying`
    public static let varchar = PostgresType(rawValue: 1043)
    /// `date`
    public static let date = PostgresType(rawValue: 1082)
    /// `time without time zone`
    public static let time = PostgresType(rawValue: 1083)
    /// `timestamp without time zone`
    public static let timestamp = PostgresType(rawValue: 1114)
    /// `timestamp with time zone`
    public static let timestamptz = PostgresType(rawValue: 1184)
    /// `interval`
    public static let interval = PostgresType(rawValue: 1186)
    /// `time with time zone`
    public static let timetz = PostgresType(rawValue: 1266)
    /// `numeric`
    public static let numeric = PostgresType(rawValue: 1700)
    /// `uuid`
    public static let uuid = PostgresType(rawValue: 2950)
    /// `jsonb`
    public static let jsonb = PostgresType(rawValue: 3802)

    /// The built-in types known here by OID, by their SQL names. `money` is not among them: how
    /// many fraction digits it has depends on the server's `lc_monetary`, which the catalog
    /// lookup asks.
    static let names: [UInt32: String] = [
        16: "bool", 17: "bytea", 18: "char", 19: "name", 20: "bigint", 21: "smallint", 23: "integer",
        25: "text", 26: "oid", 28: "xid", 29: "cid", 114: "json", 142: "xml", 600: "point", 601: "lseg", 602: "path",
        603: "box", 604: "polygon", 628: "line", 650: "cidr", 700: "real", 701: "double precision", 705: "unknown",
        718: "circle", 774: "macaddr8", 790: "money", 829: "macaddr", 869: "inet", 1042: "character", 1043: "character varying",
        1082: "date", 1083: "time", 1114: "timestamp", 1184: "timestamptz", 1186: "interval", 1266: "timetz",
        1560: "bit", 1562: "bit varying", 1700: "numeric", 2249: "record", 2950: "uuid", 3220: "pg_lsn",
        3802: "jsonb", 5069: "xid8",
        3904: "int4range", 3906: "numrange", 3908: "tsrange", 3910: "tstzrange", 3912: "daterange", 3926: "int8range",
        4451: "int4multirange", 4532: "nummultirange", 4533: "tsmultirange", 4534: "tstzmultirange",
        4535: "datemultirange", 4536: "int8multirange",
        1000: "bool[]", 1001: "bytea[]", 1005: "smallint[]", 1007: "integer[]", 1009: "text[]",
        1015: "varchar[]", 1016: "bigint[]", 1021: "real[]", 1022: "double precision[]",
        1115: "timestamp[]", 1182: "date[]", 1185: "timestamptz[]", 1231: "numeric[]",
        2951: "uuid[]", 3807: "jsonb[]", 199: "json[]", 1014: "character[]", 1003: "name[]",
        1183: "time[]", 1187: "interval[]", 1270: "timetz[]", 1041: "inet[]", 651: "cidr[]", 1017: "point[]",
        3905: "int4range[]", 3927: "int8range[]", 3907: "numrange[]", 3909: "tsrange[]", 3911: "tstzrange[]",
        3913: "daterange[]", 1028: "oid[]", 791: "money[]",
    ]

    /// The subtype of each built-in range, and the range of each built-in multirange.
    static let builtInElements: [UInt32: UInt32] = [
        3904: 23, 3926: 20, 3906: 1700, 3908: 1114, 3910: 1184, 3912: 1082,
        4451: 3904, 4536: 3926, 4532: 3906, 4533: 3908, 4534: 3910, 4535: 3912,
    ]

    /// Whether this type is known here without the catalog (money needs it for its scale).
    static func isKnown(_ oid: UInt32) -> Bool { oid != 790 && names[oid] != nil }

    /// Whether this is an array type.
    public var isArray: Bool {
        if let details { return details.kind == .array }
        return Self.names[rawValue]?.hasSuffix("[]") ?? false
    }

    /// Whether values of this type are text in the binary protocol.
    var isTextual: Bool {
        if [Self.text, .varchar, .bpchar, .name, .unknown, .json, .char].contains(self) || rawValue == 142 { return true }
        // An enum's binary form is its label; a string-like extension type's (citext) its text.
        guard let details else { return false }
        return details.kind == .enumeration || (details.kind == .base && details.category == UInt8(ascii: "S"))
    }

    /// The element type of an array, the subtype of a range, the range of a multirange.
    var element: PostgresType? {
        if let element = details?.element { return element }
        return Self.builtInElements[rawValue].map { PostgresType(rawValue: $0) }
    }

    /// The type's SQL name, as the catalog spells it (`inet`, `mood`, `public.my_type`), or
    /// `oid N` for a type not yet looked up.
    public var description: String { Self.names[rawValue] ?? details?.name ?? "oid \(rawValue)" }
}

/// What the server's catalog says of one type.
final class TypeDetails: Sendable {
    enum Kind: Sendable {
        case base, enumeration, composite, domain, range, multirange, array, pseudo
    }

    let name: String
    let kind: Kind
    /// `pg_type.typcategory` (`S` for string types).
    let category: UInt8
    /// An array's element, a range's subtype, a multirange's range, a domain's base type.
    let element: PostgresType?
    /// A composite's attribute types, in order.
    let fields: [PostgresType]
    /// `money`'s fraction digits under the server's `lc_monetary`.
    let scale: Int?

    init(name: String, kind: Kind, category: UInt8, element: PostgresType?, fields: [PostgresType], scale: Int?) {
        self.name = name
        self.kind = kind
        self.category = category
        self.element = element
        self.fields = fields
        self.scale = scale
    }
}
