/// Who made a local edit, or called `save()`: the task it ran in (nil outside any task). A
/// `save()` throws the failure of an edit its own task made before it, also after other
/// tasks' `save()` calls threw that failure (see ``SaveLedger``).
@usableFromInline
struct Editor: Hashable, Sendable {
    private let task: Int

    /// The task running now, if any.
    @usableFromInline static var current: Editor? {
        withUnsafeCurrentTask { task in task.map { Editor(task: $0.hashValue) } }
    }

    /// An editor for tests: distinct numbers are distinct tasks.
    init(task: Int) {
        self.task = task
    }
}

/// The tasks behind some local edits, each with the first and last of them (by count) that it
/// made or carried.
@usableFromInline typealias EditorEdits = [Editor: ClosedRange<UInt64>]

extension EditorEdits {
    /// `editor` made (or carried) edit number `edit` too.
    mutating func add(_ editor: Editor, edit: UInt64) {
        self[editor] = self[editor].map { $0.lowerBound...Swift.max($0.upperBound, edit) } ?? edit...edit
    }

    /// The edits of both.
    func union(_ other: EditorEdits) -> EditorEdits {
        merging(other) { Swift.min($0.lowerBound, $1.lowerBound)...Swift.max($0.upperBound, $1.upperBound) }
    }
}
