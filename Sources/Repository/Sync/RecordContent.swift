/// A record as the sync engine sees it: one row whose fields are its writable properties.
enum RecordContent<R: Record>: SyncContent {
    typealias Value = R
    typealias Field = String
    typealias Version = Int64

    static func fields(changedFrom old: R, to new: R) -> Set<String> {
        guard let old = try? RecordColumns(old), let new = try? RecordColumns(new) else { return [] }
        return new.writableChanges(since: old)
    }

    static func differing(_ a: R, _ b: R, among fields: Set<String>) -> Set<String> {
        guard !fields.isEmpty else { return [] }
        guard let a = try? RecordColumns(a), let b = try? RecordColumns(b) else { return fields }
        return a.changedProperties(since: b).intersection(fields)
    }

    static func replacing(_ fields: Set<String>, in target: R, from source: R) -> R {
        (try? target.taking(fields, from: source)) ?? target
    }

    static func differs(_ a: R, _ b: R) -> Bool {
        if let equal = equalIfEquatable(a, b) { return !equal }
        guard let a = try? RecordColumns(a), let b = try? RecordColumns(b) else { return true }
        return !a.changedProperties(since: b).isEmpty
    }

    static func name(of field: String) -> String { field }

    static func rowVersion(_ version: Int64) -> Int64 { version }
}
