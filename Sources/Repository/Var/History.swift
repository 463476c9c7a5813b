import Foundation

/// Undo and redo over any `Var`: each recorded change is a step that can be taken back.
///
/// ```swift
/// let history = History(person)                 // records this process's edits, not the database's
/// person[\.name].value = "Ada"
/// history.group { person[\.email].value = nil; person[\.name].value = "A." }   // one step
/// history.undo()                                 // name back to "Ada", email back
/// history.redo()
/// ```
///
/// On a live handle, undo and redo are edits like any other: they write through. For a
/// `Codable` value they take back only the properties the step changed, so a change someone else
/// made to another property in between stays; a property that someone else changed since the
/// step is left as they set it and reported in ``Outcome/conflicts``.
public final class History<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `undoStack`, `redoStack`, `group` and `isApplying` are only touched under `lock`.

    /// What an undo or redo did.
    public struct Outcome: Sendable, Hashable {
        /// Whether there was a step to take.
        public var applied: Bool
        /// Properties that changed since the step and were left alone (Codable values only).
        public var conflicts: [String]
    }

    /// The author of the changes undo makes.
    public static var undoAuthor: Author { Author("undo") }
    /// The author of the changes redo makes.
    public static var redoAuthor: Author { Author("redo") }

    private struct Step {
        var old: Value
        var new: Value
    }

    private let variable: Var<Value>
    private let depth: Int
    private let records: @Sendable (Author?) -> Bool
    /// `target` with the parts `from → to` changed set back to `from`'s; the parts skipped.
    private let merge: (_ target: Value, _ from: Value, _ to: Value) -> (Value, [String])
    private let lock = Lock()
    private var undoStack: [Step] = []
    private var redoStack: [Step] = []
    private var grouped: Step?
    private var isGrouping = false
    private var subscription: Subscription?

    /// A history of `variable`'s changes by the authors `recording` accepts — by default every
    /// local edit, not the database's changes nor reverts — at most `depth` steps deep.
    public convenience init(_ variable: Var<Value>, depth: Int = 100,
                            recording: @escaping @Sendable (Author?) -> Bool = History.localEdits) {
        self.init(variable, depth: depth, recording: recording) { target, from, _ in (from, []) }
    }

    /// The same, taking back only the properties a step changed (see the type's description).
    public convenience init(_ variable: Var<Value>, depth: Int = 100,
                            recording: @escaping @Sendable (Author?) -> Bool = History.localEdits) where Value: Codable {
        self.init(variable, depth: depth, recording: recording) { target, from, to in
            PropertyMerge.restoring(from: from, changedTo: to, in: target) ?? (from, [])
        }
    }

    private init(_ variable: Var<Value>, depth: Int, recording: @escaping @Sendable (Author?) -> Bool,
                 merge: @escaping (Value, Value, Value) -> (Value, [String])) {
        self.variable = variable
        self.depth = max(1, depth)
        self.records = recording
        self.merge = merge
        subscription = variable.observe { [weak self] update in self?.record(update) }
    }

    /// Every author but the database's changes, reverts, deletions — and undo and redo themselves.
    public static func localEdits(_ author: Author?) -> Bool {
        !author.isFromDatabase && author != undoAuthor && author != redoAuthor
    }

    public var canUndo: Bool { lock.withLock { !undoStack.isEmpty } }
    public var canRedo: Bool { lock.withLock { !redoStack.isEmpty } }

    /// Makes the changes `body` records one step.
    public func group(_ body: () throws -> Void) rethrows {
        lock.withLock { isGrouping = true }
        defer {
            lock.withLock {
                isGrouping = false
                if let step = grouped { push(step) }
                grouped = nil
            }
        }
        try body()
    }

    /// Takes the last step back.
    @discardableResult
    public func undo() -> Outcome {
        guard let step = lock.withLock({ undoStack.popLast() }) else { return Outcome(applied: false, conflicts: []) }
        var conflicts: [String] = []
        variable.update(as: Self.undoAuthor) { value in (value, conflicts) = merge(value, step.old, step.new) }
        lock.withLock { redoStack.append(step) }
        return Outcome(applied: true, conflicts: conflicts)
    }

    /// Takes the last undone step again.
    @discardableResult
    public func redo() -> Outcome {
        guard let step = lock.withLock({ redoStack.popLast() }) else { return Outcome(applied: false, conflicts: []) }
        var conflicts: [String] = []
        variable.update(as: Self.redoAuthor) { value in (value, conflicts) = merge(value, step.new, step.old) }
        lock.withLock { undoStack.append(step) }
        return Outcome(applied: true, conflicts: conflicts)
    }

    private func record(_ update: Update<Value>) {
        guard records(update.author) else { return }
        lock.withLock {
            if isGrouping {
                grouped = Step(old: grouped?.old ?? update.old, new: update.new)
            } else {
                push(Step(old: update.old, new: update.new))
            }
        }
    }

    /// Under the lock: a new step; the redo steps are gone.
    private func push(_ step: Step) {
        undoStack.append(step)
        if undoStack.count > depth { undoStack.removeFirst(undoStack.count - depth) }
        redoStack.removeAll()
    }
}

/// Taking back some properties of a `Codable` value, through its JSON object.
enum PropertyMerge {
    /// `target` with each property that differs between `from` and `to` set to `from`'s value —
    /// unless `target` no longer holds `to`'s value there (someone changed it since): those are
    /// named. Nil when the value does not encode as a JSON object.
    static func restoring<Value: Codable>(from: Value, changedTo to: Value, in target: Value) -> (Value, [String])? {
        guard var current = object(target), let before = object(from), let after = object(to) else { return nil }
        var conflicts: [String] = []
        for key in Set(before.keys).union(after.keys) where !same(before[key], after[key]) {
            if same(current[key], after[key]) {
                current[key] = before[key]
            } else {
                conflicts.append(key)
            }
        }
        guard let data = try? JSONSerialization.data(withJSONObject: current),
              let merged = try? JSONCoding.decoder.decode(Value.self, from: data) else { return nil }
        return (merged, conflicts.sorted())
    }

    private static func object(_ value: some Encodable) -> [String: Any]? {
        (try? JSONCoding.encoder.encode(value)).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
    }

    private static func same(_ a: Any?, _ b: Any?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case (let a?, let b?): canonical(a) == canonical(b)
        default: false
        }
    }

    private static func canonical(_ value: Any) -> Data? {
        try? JSONSerialization.data(withJSONObject: [value], options: [.sortedKeys])
    }
}
