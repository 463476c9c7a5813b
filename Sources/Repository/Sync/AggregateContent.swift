/// One independently writable part of an aggregate.
@usableFromInline
enum AggregateField<ChildID: Hashable & Sendable>: Hashable, Sendable {
    /// A property of the root row.
    case root(String)
    /// A property of one child row.
    case child(ChildID, String)
    /// Whether the child with this id exists (appended or removed).
    case presence(ChildID)
    /// The relative order of the children.
    case order
}

/// The versions of an aggregate's rows: the root's and each child's.
@usableFromInline
struct AggregateVersion<ChildID: Hashable & Sendable>: Equatable, Sendable {
    var root: Int64
    var children: [ChildID: Int64]
}

/// An aggregate as the sync engine sees it: root columns, child columns, which children
/// exist, and their order — each edited, compared and carried over on its own, so that
/// two processes appending children, or editing different rows, both keep their changes.
@usableFromInline
enum AggregateContent<A: Aggregate>: SyncContent {
    @usableFromInline typealias Field = AggregateField<A.Child.ID>
    @usableFromInline typealias Version = AggregateVersion<A.Child.ID>

    @usableFromInline static func fields(changedFrom old: A, to new: A) throws -> Set<Field> {
        var fields = Set(try RecordContent<A.Root>.fields(changedFrom: old.root, to: new.root).map(Field.root))
        let before = children(of: old)
        let after = children(of: new)
        for child in new.children {
            guard let previous = before[child.id] else {
                // A new child is written whole: what it holds must be storable.
                try RecordColumns(child).refuseUnstorableText()
                fields.insert(.presence(child.id))
                continue
            }
            guard previous != child else { continue }
            for property in try RecordContent<A.Child>.fields(changedFrom: previous, to: child) {
                fields.insert(.child(child.id, property))
            }
        }
        for child in old.children where after[child.id] == nil { fields.insert(.presence(child.id)) }
        if sharedOrder(old, new) != sharedOrder(new, old) { fields.insert(.order) }
        return fields
    }

    @usableFromInline static func differing(_ a: A, _ b: A, among fields: Set<Field>) -> Set<Field> {
        var differing = Set<Field>()
        var rootProperties = Set<String>()
        var childProperties: [A.Child.ID: Set<String>] = [:]
        let (left, right) = (children(of: a), children(of: b))
        for field in fields {
            switch field {
            case .root(let property): rootProperties.insert(property)
            case .child(let id, let property): childProperties[id, default: []].insert(property)
            case .presence(let id): if (left[id] == nil) != (right[id] == nil) { differing.insert(field) }
            case .order: if sharedOrder(a, b) != sharedOrder(b, a) { differing.insert(field) }
            }
        }
        if !rootProperties.isEmpty {
            differing.formUnion(RecordContent<A.Root>.differing(a.root, b.root, among: rootProperties).map(Field.root))
        }
        for (id, properties) in childProperties {
            switch (left[id], right[id]) {
            case (nil, nil): continue
            case (let x?, let y?):
                guard x != y else { continue }
                differing.formUnion(RecordContent<A.Child>.differing(x, y, among: properties).map { .child(id, $0) })
            default:
                differing.formUnion(properties.map { .child(id, $0) })
            }
        }
        return differing
    }

    @usableFromInline static func replacing(_ fields: Set<Field>, in target: A, from source: A) throws -> A {
        guard !fields.isEmpty else { return target }
        let sourceChildren = children(of: source)
        var rootProperties = Set<String>()
        var childProperties: [A.Child.ID: Set<String>] = [:]
        var result = target.children
        var reorder = false
        // Presence first, so that columns of an appended child have a row to land in.
        for field in fields {
            switch field {
            case .root(let property): rootProperties.insert(property)
            case .child(let id, let property): childProperties[id, default: []].insert(property)
            case .order: reorder = true
            case .presence(let id):
                let index = result.firstIndex { $0.id == id }
                switch (index, sourceChildren[id]) {
                case (let index?, nil): result.remove(at: index)
                case (nil, let child?): result.insert(child, at: insertionIndex(of: id, in: result, following: source.children))
                default: break
                }
            }
        }
        for (id, properties) in childProperties {
            guard let index = result.firstIndex(where: { $0.id == id }), let donor = sourceChildren[id] else { continue }
            result[index] = try RecordContent<A.Child>.replacing(properties, in: result[index], from: donor)
        }
        if reorder { result = ordered(result, like: source.children) }
        let root = rootProperties.isEmpty ? target.root : try RecordContent<A.Root>.replacing(rootProperties, in: target.root, from: source.root)
        return A(root: root, children: result)
    }

    /// Whether the two differ as the database holds them: each row compared as
    /// ``RecordContent/differs(_:_:)`` compares records (`==` cannot tell).
    @usableFromInline static func differs(_ a: A, _ b: A) -> Bool {
        if isBitwiseIdentical(a, b) { return false }
        guard a.children.map(\.id) == b.children.map(\.id) else { return true }
        return RecordContent<A.Root>.differs(a.root, b.root) || zip(a.children, b.children).contains { RecordContent<A.Child>.differs($0, $1) }
    }

    /// Two aggregates as read that `==` tells apart, each equal to itself (no NaN), differ as
    /// stored (see ``RecordContent/differsAsRead(_:_:)``); the rest go through ``differs(_:_:)``.
    @usableFromInline static func differsAsRead(_ a: A, _ b: A) -> Bool {
        if a != b && a == a && b == b { return true }
        return differs(a, b)
    }

    @usableFromInline static func rowVersion(_ version: Version) -> Int64 { version.root }

    @usableFromInline static func rowVersions(_ committed: Committed<Self>) -> [Int64] {
        [committed.version.root] + committed.value.children.compactMap { committed.version.children[$0.id] }
    }

    @usableFromInline static func childVersion(forKey key: String, in version: Version) -> Int64? {
        version.children.first { LiveRepository.keyText($0.key) == key }?.value
    }

    @usableFromInline static func name(of field: Field) -> String {
        switch field {
        case .root(let property): RecordContent<A.Root>.name(of: property)
        case .child(let id, let property): "\(A.Child.tableName)[\(id)].\(RecordContent<A.Child>.name(of: property))"
        case .presence(let id): "\(A.Child.tableName)[\(id)]"
        case .order: "order of \(A.Child.tableName)"
        }
    }

    /// Each field by ``name(of:)``, but an edited column of a child that `theirs` no longer has
    /// by the child, once: what conflicts is its removal, not the column.
    @usableFromInline static func conflictNames(_ fields: Set<Field>, theirs: A) -> [String] {
        let present = Set(theirs.children.map(\.id))
        return Set(fields.map { field in
            guard case .child(let id, _) = field, !present.contains(id) else { return name(of: field) }
            return "\(name(of: .presence(id))) (removed)"
        }).sorted()
    }

    // MARK: - Children

    private static func children(of value: A) -> [A.Child.ID: A.Child] {
        Dictionary(value.children.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The ids of `value`'s children that `other` has too, in `value`'s order.
    private static func sharedOrder(_ value: A, _ other: A) -> [A.Child.ID] {
        let theirs = Set(other.children.map(\.id))
        return value.children.map(\.id).filter(theirs.contains)
    }

    /// Where a child appended in `source` goes in `children`: after its nearest predecessor
    /// in `source` that `children` has, or first.
    private static func insertionIndex(of id: A.Child.ID, in children: [A.Child], following source: [A.Child]) -> Int {
        guard let position = source.firstIndex(where: { $0.id == id }) else { return children.count }
        for predecessor in source[..<position].reversed() {
            if let index = children.firstIndex(where: { $0.id == predecessor.id }) { return index + 1 }
        }
        return 0
    }

    /// `children` with those that `source` has too put in `source`'s order, in the places they
    /// held; the others stay where they are.
    private static func ordered(_ children: [A.Child], like source: [A.Child]) -> [A.Child] {
        let present = Set(children.map(\.id))
        var inSourceOrder = source.map(\.id).filter(present.contains).makeIterator()
        let sourceIDs = Set(source.map(\.id))
        let byID = Dictionary(children.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        return children.map { child in
            guard sourceIDs.contains(child.id), let next = inSourceOrder.next(), let moved = byID[next] else { return child }
            return moved
        }
    }
}
