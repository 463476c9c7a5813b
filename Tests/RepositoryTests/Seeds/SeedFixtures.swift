import Dispatch

/// Returns once every block `queue` held when this was called has run: a FIFO queue's
/// barrier, so a test waits for delivery without sleeping.
func drain(_ queue: DispatchQueue) async {
    await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
}

/// The `History` struct seed 000 wraps its address book in (Chris Eidhof, "Undo History in
/// Swift"): a stack of values, undone and redone in place.
struct EidhofHistory<A> {
    private let initialValue: A
    private var history: [A] = []
    private var redoStack: [A] = []
    init(initialValue: A) { self.initialValue = initialValue }
    var value: A {
        get { history.last ?? initialValue }
        set { history.append(newValue); redoStack = [] }
    }
    mutating func undo() {
        guard let item = history.popLast() else { return }
        redoStack.append(item)
    }
    mutating func redo() {
        guard let item = redoStack.popLast() else { return }
        history.append(item)
    }
}
