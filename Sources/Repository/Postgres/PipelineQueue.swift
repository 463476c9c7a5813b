/// Statements from many tasks waiting to go out together, and how many batches are under way —
/// plain state, kept under one lock by ``Database``.
///
/// Nobody waits for a batch to fill: a statement that finds a lane free is sent at once,
/// alone. Only while every lane has a batch under way do statements queue up; they go out
/// together as the next batch as soon as a lane is done, and the first of them sends it (it
/// leads), so no task of the pool's is spent on sending.
struct PipelineQueue<Statement> {
    /// The most batches under way at once.
    let lanes: Int
    /// The most statements one batch holds.
    let maximumBatch: Int
    private(set) var waiting: [Statement] = []
    private(set) var underWay = 0

    init(lanes: Int, maximumBatch: Int) {
        precondition(lanes > 0 && maximumBatch > 0, "a pipeline needs a lane and room for a statement")
        self.lanes = lanes
        self.maximumBatch = maximumBatch
    }

    /// A statement is about to arrive: true when a lane is free — the caller then sends it
    /// alone, now (the lane is taken); false when it must ``arrive(_:)``.
    mutating func sendsAlone() -> Bool {
        guard underWay < lanes else { return false }
        underWay += 1
        return true
    }

    /// A statement arrives. True: a lane was free, and the caller sends it alone now. False:
    /// it waits in the queue for a later batch.
    mutating func arrive(_ statement: Statement) -> Bool {
        if sendsAlone() { return true }
        waiting.append(statement)
        return false
    }

    /// A batch is done. The next batch for its lane (its first statement's task sends it), or
    /// nil when nothing waits (the lane is free).
    mutating func batchDone() -> [Statement]? {
        guard !waiting.isEmpty else {
            underWay -= 1
            return nil
        }
        let batch = Array(waiting.prefix(maximumBatch))
        waiting.removeFirst(batch.count)
        return batch
    }
}
