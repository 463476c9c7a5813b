/// Who made a local edit, or called `save()`: the task it ran in (nil outside any task). A
/// `save()` throws the failure of an edit its own task made before it, also after other
/// tasks' `save()` calls threw that failure (see ``SaveLedger``).
struct Editor: Hashable, Sendable {
    private let task: Int

    /// The task running now, if any.
    static var current: Editor? {
        withUnsafeCurrentTask { task in task.map { Editor(task: $0.hashValue) } }
    }

    /// An editor for tests: distinct numbers are distinct tasks.
    init(task: Int) {
        self.task = task
    }
}
