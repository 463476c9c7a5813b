/// Which rows and tables were announced, by the read sequence number current when their
/// announcement was handled.
struct Announcements {
    private var rows: [LiveRepository.StoreKey: UInt64] = [:]
    private var tables: [String: UInt64] = [:]
    /// Entries older than this were forgotten (to bound memory): any read before it is suspect.
    private var forgottenBefore: UInt64 = 0

    /// Records the rows under `keys` (and their tables) as announced before read `number`.
    mutating func record(_ keys: [LiveRepository.StoreKey], as number: UInt64) {
        if rows.count > 100_000 {
            rows.removeAll()
            forgottenBefore = number
        }
        var table: String?
        for key in keys {
            rows[key] = number
            // A statement's keys come together: each table is hashed once per run of them.
            if key.table != table { (tables[key.table], table) = (number, key.table) }
        }
    }

    /// Whether the row under `key` (record or aggregate root) was announced after read `number`.
    func mayHaveChanged(_ key: LiveRepository.StoreKey, since number: UInt64) -> Bool {
        number < forgottenBefore || (rows[LiveRepository.StoreKey(table: key.table, key: key.key)] ?? 0) > number
    }

    /// Whether any row of `table` was announced after read `number`.
    func mayHaveChanged(table: String, since number: UInt64) -> Bool {
        (tables[table] ?? 0) > number
    }
}
