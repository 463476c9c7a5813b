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
/// Undo and redo never put back what another author changed since the step: for a `Codable`
/// value they take back only the properties the step changed — exactly, without re-encoding —
/// and a property someone else changed since is left as they set it and named in
/// ``Outcome/conflicts``; a value without properties (a scalar, an enum, an optional that
/// someone set to nil) is taken back whole or, if someone else changed it, left and named
/// `"self"`. On a live handle, undo and redo are edits like any other: they write through.
public final class History<Value: Sendable>: @unchecked Sendable {
    // @unchecked: the stacks, groups and counters are only touched under `lock`.

    /// What an undo or redo did.
    public struct Outcome: Sendable, Hashable {
        /// Whether there was a step to take.
        public var applied: Bool
        /// What changed since the step and was left alone: property names, or `"self"` for
        /// the whole value.
        public var conflicts: [String]
    }

    /// The author of the changes undo makes.
    public static var undoAuthor: Author { Author("undo") }
    /// The author of the changes redo makes.
    public static var redoAuthor: Author { Author("redo") }

    private struct Step {
        var old: Value
        var new: Value
        /// How many changes by other authors had been seen when the step was made (or last
        /// taken): for values that cannot be compared, a later count means someone else changed it.
        var othersSeen: UInt64
    }

    /// A group's changes: those numbered after `after` and up to `through` (nil while its body
    /// runs), wherever they are delivered — inside an observer, that is after the body returned.
    private struct Group {
        let after: UInt64
        var through: UInt64?
        var step: Step?

        func contains(_ sequence: UInt64) -> Bool { sequence > after && through.map { sequence <= $0 } ?? true }
    }

    private let variable: Var<Value>
    private let depth: Int
    private let records: @Sendable (Author?) -> Bool
    /// `current` with the change `from → to` taken back where nobody else changed it since
    /// (`othersChanged`: whether another author changed the value since), and what was left.
    private let merge: (_ current: Value, _ from: Value, _ to: Value, _ othersChanged: Bool) -> (Value, [String])
    private let lock = Lock()
    private var undoStack: [Step] = []
    private var redoStack: [Step] = []
    private var groups: [Group] = []
    private var groupDepth = 0
    private var othersChanges: UInt64 = 0
    private var lastSeen: UInt64 = 0
    private var subscription: Subscription?

    /// A history of `variable`'s changes by the authors `recording` accepts — by default every
    /// local edit, not the database's changes nor reverts — at most `depth` steps deep. Its
    /// values cannot be compared, so an undo after another author changed the value leaves it
    /// and names `"self"`.
    public convenience init(_ variable: Var<Value>, depth: Int = 100,
                            recording: @escaping @Sendable (Author?) -> Bool = History.localEdits) {
        self.init(variable, depth: depth, recording: recording) { current, from, _, othersChanged in
            othersChanged ? (current, [ExactMerge.wholeValue]) : (from, [])
        }
    }

    /// The same, comparing whole values: an undo puts the old value back where the value is
    /// still what the step made it.
    public convenience init(_ variable: Var<Value>, depth: Int = 100,
                            recording: @escaping @Sendable (Author?) -> Bool = History.localEdits) where Value: Equatable {
        self.init(variable, depth: depth, recording: recording) { current, from, to, _ in
            if current == to { return (from, []) }
            return (current, current == from ? [] : [ExactMerge.wholeValue])
        }
    }

    /// The same, taking back only the properties a step changed (see the type's description).
    public convenience init(_ variable: Var<Value>, depth: Int = 100,
                            recording: @escaping @Sendable (Author?) -> Bool = History.localEdits) where Value: Codable {
        self.init(variable, depth: depth, recording: recording) { current, from, to, _ in
            ExactMerge.restoring(from: from, changedTo: to, in: current)
        }
    }

    /// The same, for values that are both `Codable` and `Equatable`: property by property.
    public convenience init(_ variable: Var<Value>, depth: Int = 100,
                            recording: @escaping @Sendable (Author?) -> Bool = History.localEdits) where Value: Codable & Equatable {
        self.init(variable, depth: depth, recording: recording) { current, from, to, _ in
            ExactMerge.restoring(from: from, changedTo: to, in: current)
        }
    }

    private init(_ variable: Var<Value>, depth: Int, recording: @escaping @Sendable (Author?) -> Bool,
                 merge: @escaping (Value, Value, Value, Bool) -> (Value, [String])) {
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

    /// Whether there is a step to undo.
    public var canUndo: Bool { lock.withLock { closeGroups(); return !undoStack.isEmpty } }
    /// Whether there is an undone step to redo.
    public var canRedo: Bool { lock.withLock { closeGroups(); return !redoStack.isEmpty } }

    /// Makes the changes `body` records one step — also when `body` runs inside an observer,
    /// where its changes are delivered after it returns. Groups inside a group are part of it.
    public func group(_ body: () throws -> Void) rethrows {
        let start = variable.publishedCount
        let outermost = lock.withLock {
            groupDepth += 1
            if groupDepth == 1 { groups.append(Group(after: start)) }
            return groupDepth == 1
        }
        defer {
            let end = variable.publishedCount
            lock.withLock {
                groupDepth -= 1
                if outermost, let last = groups.indices.last {
                    groups[last].through = end
                    closeGroups(seenThrough: lastSeen)
                }
            }
        }
        try body()
    }

    /// Takes the last step back.
    @discardableResult
    public func undo() -> Outcome {
        take(from: \.undoStack, to: \.redoStack, as: Self.undoAuthor) { step in (step.old, step.new) }
    }

    /// Takes the last undone step again.
    @discardableResult
    public func redo() -> Outcome {
        take(from: \.redoStack, to: \.undoStack, as: Self.redoAuthor) { step in (step.new, step.old) }
    }

    private func take(from source: ReferenceWritableKeyPath<History, [Step]>, to target: ReferenceWritableKeyPath<History, [Step]>,
                      as author: Author, _ direction: (Step) -> (back: Value, from: Value)) -> Outcome {
        let taken: (Step, Bool)? = lock.withLock {
            closeGroups()
            guard let step = self[keyPath: source].popLast() else { return nil }
            return (step, othersChanges > step.othersSeen)
        }
        guard let (step, othersChanged) = taken else { return Outcome(applied: false, conflicts: []) }
        let (back, from) = direction(step)
        var conflicts: [String] = []
        variable.update(as: author) { value in (value, conflicts) = merge(value, back, from, othersChanged) }
        lock.withLock { self[keyPath: target].append(Step(old: step.old, new: step.new, othersSeen: othersChanges)) }
        return Outcome(applied: true, conflicts: conflicts)
    }

    private func record(_ update: Update<Value>) {
        lock.withLock {
            lastSeen = max(lastSeen, update.sequence)
            closeGroups(seenThrough: max(update.sequence, 1) - 1)  // groups ended before this change are complete
            if !records(update.author) {
                if update.author != Self.undoAuthor && update.author != Self.redoAuthor { othersChanges += 1 }
            } else if let index = groups.firstIndex(where: { $0.contains(update.sequence) }) {
                groups[index].step = Step(old: groups[index].step?.old ?? update.old, new: update.new, othersSeen: othersChanges)
            } else {
                push(Step(old: update.old, new: update.new, othersSeen: othersChanges))
            }
            closeGroups(seenThrough: lastSeen)
        }
    }

    /// Under the lock: makes steps of the ended groups whose changes were all seen (all ended
    /// groups when nil: the caller is past their delivery, or their last changes were not
    /// this `Var`'s and will not come).
    private func closeGroups(seenThrough seen: UInt64? = nil) {
        while let group = groups.first, let through = group.through, seen.map({ through <= $0 }) ?? true {
            groups.removeFirst()
            if let step = group.step { push(step) }
        }
    }

    /// Under the lock: a new step; the redo steps are gone.
    private func push(_ step: Step) {
        undoStack.append(step)
        if undoStack.count > depth { undoStack.removeFirst(undoStack.count - depth) }
        redoStack.removeAll()
    }
}
