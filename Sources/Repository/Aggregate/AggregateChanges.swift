/// What a local edit changed in an aggregate, row by row: the write it needs.
struct AggregateChanges<A: Aggregate> {
    /// Root properties to write.
    var rootProperties: Set<String> = []
    /// Children present before and after whose properties changed.
    var updated: [(child: A.Child, properties: Set<String>)] = []
    /// New children and their positions.
    var inserted: [(child: A.Child, position: Int)] = []
    /// Children no longer there.
    var removed: [A.Child.ID] = []
    /// Whether a child that stayed is at another index (every position is written then: see
    /// ``AggregateTable/write(_:of:base:on:)``).
    var reordered = false

    /// Appending, removing or reordering children: written with a write of the root row, which
    /// gives it a new version.
    var isStructural: Bool { !inserted.isEmpty || !removed.isEmpty || reordered }
    var isEmpty: Bool { rootProperties.isEmpty && updated.isEmpty && !isStructural }

    init(from base: A, to edited: A) throws {
        rootProperties = try RecordColumns(edited.root).writableChanges(since: RecordColumns(base.root))
        let before = Dictionary(base.children.enumerated().map { ($1.id, (index: $0, child: $1)) }, uniquingKeysWith: { first, _ in first })
        let after = Set(edited.children.map(\.id))
        for (position, child) in edited.children.enumerated() {
            guard let old = before[child.id] else {
                inserted.append((child, position))
                continue
            }
            if old.index != position { reordered = true }
            guard old.child != child else { continue }
            let properties = try RecordColumns(child).writableChanges(since: RecordColumns(old.child))
            if !properties.isEmpty { updated.append((child, properties)) }
        }
        removed = base.children.map(\.id).filter { !after.contains($0) }
    }
}
