import Synchronization

/// One `PATCH` of a person at a time, in arrival order.
///
/// Requests share one live handle per person, and a handle merges the edits made through it:
/// two PATCHes at once would both be answered 200 while only the later name is written, and
/// both would pass an `If-Match` naming the version they found. Taken in turns, each sees the
/// version the one before it committed — so `If-Match` refuses the second with 412, a 409 speaks
/// of another process's write, and every 200 reports a name the row held.
final class PatchTurns: Sendable {
    /// Per person with a PATCH under way, the requests waiting for their turn.
    private let queues = Mutex<[Int64: [CheckedContinuation<Void, Never>]]>([:])

    /// Runs `body` once every earlier PATCH of person `id` has finished.
    func run<T>(_ id: Int64, _ body: () async throws -> T) async throws -> T {
        await withCheckedContinuation { (turn: CheckedContinuation<Void, Never>) in
            let mayGo = queues.withLock { queues in
                guard queues[id] != nil else {
                    queues[id] = []
                    return true
                }
                queues[id]!.append(turn)
                return false
            }
            if mayGo { turn.resume() }
        }
        defer { pass(id) }
        return try await body()
    }

    /// Hands person `id`'s turn to the next request waiting, if any.
    private func pass(_ id: Int64) {
        let next = queues.withLock { queues -> CheckedContinuation<Void, Never>? in
            guard var waiting = queues[id], !waiting.isEmpty else {
                queues[id] = nil
                return nil
            }
            let next = waiting.removeFirst()
            queues[id] = waiting
            return next
        }
        next?.resume()
    }
}
