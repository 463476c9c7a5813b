/// Which rows and tables were announced, by the read sequence number current when their
/// announcement was handled.
struct Announcements {
    /// Each table's announced rows (by key text) — the table's name hashed once per run of its
    /// keys, not once per key — and the table's own latest number.
    private var tables: [String: (latest: UInt64, rows: [String: UInt64])] = [:]
    /// How many rows are remembered, over every table.
    private var rowCount = 0
    /// Entries older than this were forgotten (to bound memory): any read before it is suspect.
    private var forgottenBefore: UInt64 = 0

    /// The most rows remembered; beyond it, every row is forgotten at once.
    static let rowLimit = 100_000

    /// Records the rows under `keys` (and their tables) as announced before read `number`.
    mutating func record(_ keys: [LiveRepository.StoreKey], as number: UInt64) {
        if rowCount > Self.rowLimit {
            for table in tables.keys { tables[table]?.rows.removeAll() }
            rowCount = 0
            forgottenBefore = number
        }
        var start = keys.startIndex
        // A statement's keys come together: each run of one table's keys is recorded in place.
        while start < keys.endIndex {
            let table = keys[start].table
            var end = start + 1
            while end < keys.endIndex && keys[end].table == table { end += 1 }
            record(keys[start..<end], of: table, as: number)
            start = end
        }
    }

    private mutating func record(_ keys: ArraySlice<LiveRepository.StoreKey>, of table: String, as number: UInt64) {
        rowCount += Self.record(keys, as: number, in: &tables[table, default: (0, [:])])
    }

    /// Records `keys` in one table's `entry`; how many it did not hold yet.
    private static func record(_ keys: ArraySlice<LiveRepository.StoreKey>, as number: UInt64,
                               in entry: inout (latest: UInt64, rows: [String: UInt64])) -> Int {
        entry.latest = number
        var added = 0
        for key in keys where entry.rows.updateValue(number, forKey: key.key) == nil { added += 1 }
        return added
    }

    /// Whether the row under `key` (record or aggregate root) was announced after read `number`.
    func mayHaveChanged(_ key: LiveRepository.StoreKey, since number: UInt64) -> Bool {
        number < forgottenBefore || (tables[key.table]?.rows[key.key] ?? 0) > number
    }

    /// Whether any row of `table` was announced after read `number`.
    func mayHaveChanged(table: String, since number: UInt64) -> Bool {
        (tables[table]?.latest ?? 0) > number
    }
}
