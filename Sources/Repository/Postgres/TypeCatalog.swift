/// The types of one database that this library does not know by OID — enums, composites,
/// ranges, domains, extensions' types, `money` — as the server's catalog describes them,
/// looked up the first time a result holds one and kept for the pool (or connection) after.
///
/// A result's columns then carry their type's name and kind: errors name the type (`mood`,
/// `inet`, `public.my_type`), never an OID alone, and an enum reads as its label.
final class TypeCatalog: Sendable {
    private let known = Locked<[UInt32: PostgresType]>([:])
    /// How many lookups found types (for tests: a type is looked up once).
    let lookups = Locked(0)

    /// The closure of `$1`'s types: with each, the types its values are made of (an array's
    /// element, a range's subtype, a composite's attributes, a domain's base type).
    static let lookup = """
        WITH RECURSIVE wanted(oid) AS (
            SELECT unnest($1::oid[])
          UNION
            SELECT part.oid FROM wanted w JOIN pg_catalog.pg_type t ON t.oid = w.oid CROSS JOIN LATERAL (
                SELECT t.typelem WHERE t.typelem <> 0 AND t.typcategory = 'A'
                UNION ALL SELECT t.typbasetype WHERE t.typbasetype <> 0
                UNION ALL SELECT r.rngsubtype FROM pg_catalog.pg_range r WHERE r.rngtypid = t.oid
                UNION ALL SELECT r.rngtypid FROM pg_catalog.pg_range r WHERE r.rngmultitypid = t.oid
                UNION ALL SELECT a.atttypid FROM pg_catalog.pg_attribute a
                    WHERE a.attrelid = t.typrelid AND t.typrelid <> 0 AND a.attnum > 0 AND NOT a.attisdropped
            ) part(oid)
        )
        SELECT t.oid::int8, pg_catalog.format_type(t.oid, NULL), t.typtype, t.typcategory,
               (CASE WHEN t.typtype = 'r' THEN (SELECT r.rngsubtype FROM pg_catalog.pg_range r WHERE r.rngtypid = t.oid)
                     WHEN t.typtype = 'm' THEN (SELECT r.rngtypid FROM pg_catalog.pg_range r WHERE r.rngmultitypid = t.oid)
                     WHEN t.typtype = 'd' THEN t.typbasetype
                     WHEN t.typcategory = 'A' THEN t.typelem END)::int8,
               ARRAY(SELECT a.atttypid::int8 FROM pg_catalog.pg_attribute a
                     WHERE a.attrelid = t.typrelid AND t.typrelid <> 0 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum),
               CASE WHEN t.oid = 790 THEN pg_catalog.scale('1'::pg_catalog.money::pg_catalog.numeric) END
        FROM pg_catalog.pg_type t JOIN wanted w ON w.oid = t.oid
        """

    /// `result` with its columns' types described, after looking up (with `query`, on the
    /// thread of a caller that cannot suspend: the change feed's) those not known yet.
    func describing(_ result: QueryResult, query: (String, [SQLValue]) throws -> QueryResult) -> QueryResult {
        guard let missing = missing(in: result) else { return result }
        if !missing.isEmpty, let rows = try? query(Self.lookup, [Self.parameter(missing)]) { record(rows) }
        return described(result)
    }

    /// `$1` of ``lookup``.
    static func parameter(_ oids: [UInt32]) -> SQLValue { .text("{\(oids.map(String.init).joined(separator: ","))}") }

    /// nil when every column's type is known here by OID; else the OIDs still to look up.
    func missing(in result: QueryResult) -> [UInt32]? {
        guard result.columns.contains(where: { !PostgresType.isKnown($0.type.rawValue) }) else { return nil }
        let unknown = result.columns.map(\.type.rawValue).filter { !PostgresType.isKnown($0) }
        return known.withLock { known in Set(unknown.filter { known[$0] == nil }).sorted() }
    }

    func described(_ result: QueryResult) -> QueryResult {
        let types = known.withLock { $0 }
        let columns = result.columns.map { column in
            QueryResult.Column(name: column.name, type: types[column.type.rawValue] ?? column.type)
        }
        return result.replacingColumns(columns)
    }

    /// Adds the looked-up types, each with the types it is made of.
    func record(_ rows: QueryResult) {
        struct Row {
            let name: String, kind: UInt8, category: UInt8, element: UInt32?, fields: [UInt32], scale: Int?
        }
        lookups.withLock { $0 += 1 }
        var raw: [UInt32: Row] = [:]
        for row in rows {
            guard let oid = try? row.decode(Int64.self, at: 0), let name = try? row.decode(String.self, at: 1),
                  let kind = try? row.decode(String.self, at: 2), let category = try? row.decode(String.self, at: 3) else { continue }
            raw[UInt32(truncatingIfNeeded: oid)] = Row(
                name: name, kind: kind.utf8.first ?? 0, category: category.utf8.first ?? 0,
                element: ((try? row.decode(Int64?.self, at: 4)) ?? nil).map { UInt32(truncatingIfNeeded: $0) },
                fields: ((try? row.decode([Int64].self, at: 5)) ?? []).map { UInt32(truncatingIfNeeded: $0) },
                scale: (try? row.decode(Int?.self, at: 6)) ?? nil)
        }
        var known = known.withLock { $0 }
        func type(_ oid: UInt32, depth: Int = 0) -> PostgresType {
            if let existing = known[oid] { return existing }
            guard let row = raw[oid], depth < 32 else { return PostgresType(rawValue: oid) }
            let kinds: [UInt8: TypeDetails.Kind] = [
                UInt8(ascii: "e"): .enumeration, UInt8(ascii: "c"): .composite, UInt8(ascii: "d"): .domain,
                UInt8(ascii: "r"): .range, UInt8(ascii: "m"): .multirange, UInt8(ascii: "p"): .pseudo,
            ]
            let kind = row.category == UInt8(ascii: "A") ? .array : kinds[row.kind] ?? .base
            let details = TypeDetails(name: row.name, kind: kind, category: row.category,
                                      element: row.element.map { type($0, depth: depth + 1) },
                                      fields: row.fields.map { type($0, depth: depth + 1) }, scale: row.scale)
            let described = PostgresType(rawValue: oid, details: details)
            known[oid] = described
            return described
        }
        for oid in raw.keys { _ = type(oid) }
        let found = known
        self.known.withLock { $0.merge(found) { current, _ in current } }
    }
}
