/// Puts local edits on top of a newer committed aggregate: the three-way merge behind
/// conflict handling and behind remote changes that arrive while edits wait to be written.
enum AggregateMerge {
    /// `theirs` plus the edits that turned `base` into `mine`, row by row and column by column.
    ///
    /// - Columns both sides changed are conflicts: they keep `mine`'s value only with
    ///   `keepingConflicts`, and are named in `conflicts` either way.
    /// - Children `mine` removed are removed; children `mine` added are inserted after their
    ///   predecessor in `mine`; if `mine` reordered the children, its order wins.
    /// - A child `mine` edited but `theirs` deleted stays deleted (a conflict).
    static func merge<A: Aggregate>(base: A, mine: A, theirs: A, keepingConflicts: Bool) throws -> (value: A, conflicts: [String]) {
        var conflicts: [String] = []
        let root = try mergeRow(base: base.root, mine: mine.root, theirs: theirs.root, keepingConflicts: keepingConflicts) {
            conflicts.append($0)
        }
        let baseChildren = Dictionary(base.children.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let mineChildren = Dictionary(mine.children.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let theirIDs = Set(theirs.children.map(\.id))

        var children: [A.Child] = []
        for child in theirs.children {
            guard let old = baseChildren[child.id] else {
                children.append(child)  // theirs added it
                continue
            }
            guard let edited = mineChildren[child.id] else { continue }  // mine removed it
            children.append(try mergeRow(base: old, mine: edited, theirs: child, keepingConflicts: keepingConflicts) {
                conflicts.append("\(A.Child.tableName)[\(child.id)].\($0)")
            })
        }
        for (id, old) in baseChildren where !theirIDs.contains(id) {
            if let edited = mineChildren[id], edited != old { conflicts.append("\(A.Child.tableName)[\(id)] (deleted)") }
        }
        children = order(children, following: mine.children, base: base.children)
        return (A(root: root, children: children), conflicts)
    }

    /// `theirs` with the properties `mine` changed since `base`; `conflict` hears each
    /// property both changed.
    private static func mergeRow<R: Record>(base: R, mine: R, theirs: R, keepingConflicts: Bool,
                                            conflict: (String) -> Void) throws -> R {
        let baseColumns = try RecordColumns(base)
        let mineColumns = try RecordColumns(mine)
        let ours = mineColumns.writableChanges(since: baseColumns)
        guard !ours.isEmpty else { return theirs }
        // Both changed it, to different values (the same value twice is agreement, as when
        // their change already reached this handle).
        let theirColumns = try RecordColumns(theirs)
        let overlap = ours.intersection(theirColumns.writableChanges(since: baseColumns))
            .intersection(mineColumns.changedProperties(since: theirColumns))
        overlap.sorted().forEach(conflict)
        return try theirs.taking(keepingConflicts ? ours : ours.subtracting(overlap), from: mine)
    }

    /// `merged` (theirs' order, without mine's additions placed yet) arranged so that mine's
    /// additions follow their predecessor in `mine`, and mine's reordering, if any, wins.
    private static func order<Child: Identifiable>(_ merged: [Child], following mine: [Child], base: [Child]) -> [Child] {
        let baseIDs = Set(base.map(\.id))
        let mergedByID = Dictionary(merged.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let mineShared = mine.map(\.id).filter { baseIDs.contains($0) }
        let reordered = mineShared != base.map(\.id).filter { id in mine.contains { $0.id == id } }
        var result: [Child]
        if reordered {
            // Mine's order for the children it has; theirs' additions keep their place at the end.
            let mineIDs = Set(mine.map(\.id))
            result = mine.compactMap { mergedByID[$0.id] } + merged.filter { !mineIDs.contains($0.id) }
        } else {
            result = merged
        }
        var present = Set(result.map(\.id))
        for (index, child) in mine.enumerated() where !baseIDs.contains(child.id) && !present.contains(child.id) {
            let predecessor = mine[..<index].last { present.contains($0.id) }
            let position = predecessor.flatMap { previous in result.firstIndex { $0.id == previous.id } }.map { $0 + 1 } ?? 0
            result.insert(child, at: position)
            present.insert(child.id)
        }
        return result
    }
}
