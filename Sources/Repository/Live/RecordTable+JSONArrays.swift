/// Arrays of `json` or `jsonb` columns. A Swift array of `Codable` values encodes as one JSON
/// array — what a `jsonb` column holding a JSON array takes — but a `jsonb[]` column takes an
/// array of documents: written to such a column, a JSON array is made the array of its elements
/// by the server, and an array literal (`{}`, which an empty Swift array encodes as) is taken as it is.
extension RecordTable {
    /// The resolve query's expression for ``jsonArrayColumns`` (of the table `c`): each
    /// column's element type (`json` or `jsonb`, no space), a space, and its name.
    static var jsonArrayColumnsQuery: String {
        """
        ARRAY(SELECT t.typelem::regtype::text || ' ' || a.attname::text FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid WHERE a.attrelid = c.oid
              AND a.attnum > 0 AND NOT a.attisdropped AND t.typcategory = 'A' AND t.typelem IN ('json'::regtype, 'jsonb'::regtype))
        """
    }

    /// ``jsonArrayColumns`` from what ``jsonArrayColumnsQuery`` returned.
    static func jsonArrayColumns(_ described: [String]) -> [String: String] {
        Dictionary(described.compactMap { entry in
            entry.firstIndex(of: " ").map { (String(entry[entry.index(after: $0)...]), String(entry[..<$0])) }
        }, uniquingKeysWith: { first, _ in first })
    }

    /// The SQL for parameter `number` written to `column`.
    func parameter(_ number: Int, for column: String) -> String {
        guard let element = jsonArrayColumns[column] else { return "$\(number)" }
        return "(CASE WHEN left($\(number)::text, 1) = '[' THEN ARRAY(SELECT \(element)_array_elements($\(number)::text::\(element))) "
            + "ELSE $\(number)::text::\(element)[] END)"
    }
}
