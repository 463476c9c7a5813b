/// `json`/`jsonb` columns and arrays of them. A Swift array of `Codable` values encodes as one
/// JSON array — what a `jsonb` column holding a JSON array takes — but a `jsonb[]` column takes
/// an array of documents: written to such a column, a JSON array is made the array of its
/// elements by the server, and an array literal (`{}`, which an empty Swift array encodes as) is
/// taken as it is. An empty array of structs written to a `json`/`jsonb` column is `[]`.
extension RecordTable {
    /// The resolve query's expression for ``jsonColumns`` (of the table `c`): each column's
    /// type (`json`, `jsonb`, `json[]` or `jsonb[]`, no space), a space, and its name.
    static var jsonColumnsQuery: String {
        """
        ARRAY(SELECT CASE WHEN t.typcategory = 'A' THEN t.typelem::regtype::text || '[]' ELSE t.oid::regtype::text END || ' ' || a.attname::text
              FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
              AND (t.oid IN ('json'::regtype, 'jsonb'::regtype) OR (t.typcategory = 'A' AND t.typelem IN ('json'::regtype, 'jsonb'::regtype))))
        """
    }

    /// ``jsonColumns`` from what ``jsonColumnsQuery`` returned.
    static func jsonColumns(_ described: [String]) -> [String: String] {
        Dictionary(described.compactMap { entry in
            entry.firstIndex(of: " ").map { (String(entry[entry.index(after: $0)...]), String(entry[..<$0])) }
        }, uniquingKeysWith: { first, _ in first })
    }

    /// The SQL for parameter `number` written to `column`; `emptyArray`: the value is an empty
    /// array of structs, sent as `{}`.
    func parameter(_ number: Int, for column: String, emptyArray: Bool = false) -> String {
        guard let type = jsonColumns[column] else { return "$\(number)" }
        guard type.hasSuffix("[]") else {
            return emptyArray ? "(CASE WHEN $\(number)::text = '{}' THEN '[]' ELSE $\(number)::text END)::\(type)" : "$\(number)"
        }
        let element = type.dropLast(2)
        return "(CASE WHEN left($\(number)::text, 1) = '[' THEN ARRAY(SELECT \(element)_array_elements($\(number)::text::\(element))) "
            + "ELSE $\(number)::text::\(type) END)"
    }
}
