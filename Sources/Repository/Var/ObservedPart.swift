/// Where a `Var` sits in its root value, for Swift Observation: the path from the root (key
/// paths, indices, ids), how to read this part from the root, and the root cell that registers
/// access. Reading a part registers that part alone; the cell tells Observation about a change
/// of a part only when the part's value changed.
@usableFromInline struct ObservedPart {
    /// The components from the root; empty for the root; nil when a component cannot name a
    /// part (then the parent's part is registered instead).
    let path: [AnyHashable]?
    /// This part of a root value (type-erased); nil where the root holds no such part (an
    /// index past the end, an id that is gone) — a part that is gone has changed.
    let project: (Any) -> Any?
    /// Registers access to the whole root.
    let registerWhole: () -> Void
    /// Registers access to a part of the root, read through the sub-reference that keeps the
    /// cache, with how to make the test of whether a change of the root changed that part.
    let registerPart: ([AnyHashable], PartKeyCache, () -> (Any, Any) -> Bool) -> Void
    /// The key this part was last registered under (nil for the root; see ``PartKeyCache``).
    let keyCache: PartKeyCache?
    /// How many changes of the root were published so far (see ``Update/sequence``).
    let publishedCount: () -> UInt64

    init<State: ValueHolding>(root cell: ObservedState<State>) {
        path = []
        project = { $0 }
        registerWhole = { cell.registerAccess() }
        registerPart = { path, cache, differs in cell.registerAccess(part: path, cache: cache, differs: differs) }
        publishedCount = { cell.publishedCount }
        keyCache = nil
    }

    private init(path: [AnyHashable]?, project: @escaping (Any) -> Any?, of parent: ObservedPart) {
        self.path = path
        self.project = project
        registerWhole = parent.registerWhole
        registerPart = parent.registerPart
        publishedCount = parent.publishedCount
        keyCache = PartKeyCache()
    }

    /// The part named `component` of this one, read from this one's value with `read` (nil
    /// where this one's value holds no such part; `read` must not trap).
    @usableFromInline func child(_ component: AnyHashable?, _ read: @escaping (Any) -> Any?) -> ObservedPart {
        guard let path, let component else {
            return self  // cannot be told apart: register as the parent does
        }
        let project = self.project
        return ObservedPart(path: path + [component], project: { project($0).flatMap(read) }, of: self)
    }

    /// Registers access to this part; `differs` compares two values of it. A part that
    /// appears or disappears has changed.
    /// (`differs` is asked for only when the part is registered anew.)
    func registerAccess(differs makeDiffers: () -> (Any, Any) -> Bool) {
        guard let path, !path.isEmpty, let keyCache else { return registerWhole() }
        let project = self.project
        registerPart(path, keyCache) {
            let differs = makeDiffers()
            return { old, new in
                switch (project(old), project(new)) {
                case (nil, nil): false
                case let (old?, new?): differs(old, new)
                default: true
                }
            }
        }
    }
}
